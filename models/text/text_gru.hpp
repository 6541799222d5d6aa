// The GRU baselines of the GRNN paper (section 4) for multi-label text classification (task
// codiesp): `text-gru`, a GRU over the word embeddings whose last state gives the labels' logits
// (paper Eq. 5: y~ = sigmoid(P h_T + b_p)), with hidden 128 or a size matched to a GRNN's
// parameter count; and `text-bigru`, a GRU of 64 units each way, the two last states
// concatenated before P. (The name `gru` is PhysioNet's mortality GRU, models/clinical.)
//     h_t = GRU(E[w_t], h_{t-1})          (rnn_cells.hpp, Cho et al. 2014)
//     logits = P [h_T ; h'_1] + b_p       (h' the reverse GRU's state after the whole note)
//     loss = mean over (document, label) of BCE
// Each row steps over its own words only (text_inputs.hpp). Inspection (batch of one): the
// label probabilities sigmoid(P h_t + b_p) after every word, "t<t>/p" (paper Fig. 4's GRU trace;
// text-gru only).
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "models/layers/linear.hpp"
#include "models/layers/rnn_cells.hpp"
#include "models/model.hpp"

namespace memgrad::text {

class TextGru : public Model {
 public:
  TextGru(const std::string& name, const nlohmann::json& config, DType dtype, uint64_t seed);
  std::string name() const override { return name_; }
  nlohmann::json config() const override { return config_; }
  ForwardResult forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) override;
  bool supports_shards() const override { return true; }

 private:
  std::string name_;
  nlohmann::json config_;
  int64_t vocab_ = 0, labels_ = 0;
  double dropout_ = 0;  // on the looked-up embeddings, in training
  Parameter* embed_table_ = nullptr;
  std::optional<GruCell> forward_, reverse_;
  layers::Linear out_;
};

// The largest hidden size of a one-layer GRU (embedding E, labels L) with no more parameters than a
// GRNN (embedding E, control C, L labels), counting every weight and bias but the embedding table
// (the same in both): the paper's matching rule, which gives its 846 for 5,000 labels and 793 for
// 4,000 (the closest count would give 847 and 794).
int64_t matched_gru_hidden(int64_t embedding, int64_t control, int64_t labels);
int64_t grnn_parameters(int64_t embedding, int64_t control, int64_t labels);
int64_t gru_parameters(int64_t embedding, int64_t hidden, int64_t labels);

}  // namespace memgrad::text
