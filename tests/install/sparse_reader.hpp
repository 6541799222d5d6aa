// sparse-reader: a one-hop memory reader whose attention is sparsemax. A query q [B, D] is mapped
// to a key k = q Wq; each of the N memory rows m_n [D] (N read from the batch) gets the score
// <m_n, k>; the attention
// a = sparsemax(scores) [B, N] reads r = sum_n a_n m_n [D]; logits = r Wo + bo [B, C] and the loss
// is their cross-entropy against the target class.
// Batch fields: "memory" [B, N, D], "query" [B, D], "target" [B] (class numbers as floats).
#pragma once
#include <memgrad/models/model.hpp>

namespace custom {

class SparseReader : public memgrad::Model {
 public:
  SparseReader(const nlohmann::json& config, memgrad::DType dtype, uint64_t seed);
  std::string name() const override { return "sparse-reader"; }
  nlohmann::json config() const override { return config_; }
  memgrad::ForwardResult forward(memgrad::Tape& tape, const memgrad::Batch& batch,
                                 const memgrad::ForwardOptions& opts) override;
  bool supports_shards() const override { return true; }

 private:
  nlohmann::json config_;
  int64_t width_, classes_;
  memgrad::Parameter *wq_, *wo_, *bo_;
};

// A batch of the toy task the example trains on: each memory row is a key (its first width/2
// features) and a value (the rest); the query is one row's key (value zeroed) and the target the
// index of the largest of that row's first C value features. classes <= width / 2.
void make_toy_batch(memgrad::Rng& rng, memgrad::DType dtype, int64_t batch, int64_t slots,
                    int64_t width, int64_t classes, memgrad::Batch& out);

}  // namespace custom
