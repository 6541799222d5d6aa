// The knowledge-base-free baseline of the codiesp-kb task: the note's bag of words into a
// logistic layer, one sigmoid per label (issue 21: "every model beats a knowledge-base-free
// baseline"):
//     logits = note_counts W + b   (W [V, L], zero at the start),
//     loss = Σ_r BCE(σ(logit_r), y_r) averaged over notes + (l2 / 2) |W|^2.
// It reads the KB batch's "note" and "labels" fields (models/text/kb_batch.hpp) and ignores the
// pages. The counts are divided by the note's length when "bag" is "mean".
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "models/model.hpp"

namespace memgrad::text {

class KbBowLR : public Model {
 public:
  KbBowLR(const nlohmann::json& config, DType dtype, uint64_t seed);
  std::string name() const override { return "bow-lr"; }
  nlohmann::json config() const override { return config_; }
  ForwardResult forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) override;
  bool supports_shards() const override { return true; }

 private:
  nlohmann::json config_;
  int64_t vocab_ = 0, labels_ = 0;
  double l2_ = 0;
  bool mean_ = false;
  Parameter *w_ = nullptr, *b_ = nullptr;
};

}  // namespace memgrad::text
