// The neural bag-of-words baseline of the GRNN paper (section 4, "Baselines"): the note is the
// attention-weighted sum of its word embeddings, with attention scores computed from each word's
// local neighbourhood and shared by all labels, then the labels' logits as for the GRU (paper
// Eq. 6 with h_T replaced by h):
//     a_t = sum_{k=-K..K} E[w_{t+k}] w_k                     (scorer "linear", the default;
//                                                             a bias would cancel in the softmax)
//     a_t = v . tanh(sum_{k=-K..K} E[w_{t+k}] W_k + b)       (scorer "tanh", attention size A)
//     (words outside the note count as 0)
//     alpha = softmax_t(a) over the note's words,  h = sum_t alpha_t E[w_t]
//     logits = P h + b_p,  loss = mean over (document, label) of BCE
// The paper says only that the scores "are based on the local neighborhoods of the words". The
// reference code scores with a linear convolution over the window to one channel (its
// attentionbow.py): the "linear" scorer. The planning notes' form with a tanh layer is the "tanh"
// scorer (attention size ours, 64). The window half-width K is not given anywhere: K = 2
// (planning notes, ambiguity 10). No recurrence: padding positions get exactly zero weight.
// "dropout" (default 0, as the reference code): inverted dropout on every looked-up embedding
// E[w_t] in training (the scores and the bag both see the dropped values), ours; without it the
// table memorises its 500 training notes within a few epochs (docs/results/codiesp.md). Inspection
// (batch of one): the weights alpha, "alpha".
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "models/layers/linear.hpp"
#include "models/model.hpp"

namespace memgrad::text {

class BowAttention : public Model {
 public:
  BowAttention(const nlohmann::json& config, DType dtype, uint64_t seed);
  std::string name() const override { return "bow-attention"; }
  nlohmann::json config() const override { return config_; }
  ForwardResult forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) override;
  bool supports_shards() const override { return true; }

 private:
  nlohmann::json config_;
  int64_t vocab_ = 0, labels_ = 0, window_ = 2, attention_ = 64;
  double dropout_ = 0;
  bool linear_ = true;  // scorer "linear" (attention_ is then 1 and attn_v_ unused)
  Parameter* embed_table_ = nullptr;
  layers::Linear window_proj_;      // E -> (2K + 1) A: every offset's W_k in one GEMM
  Parameter* attn_bias_ = nullptr;  // [A], scorer "tanh" only
  Parameter* attn_v_ = nullptr;     // [A, 1], scorer "tanh" only
  layers::Linear out_;
};

}  // namespace memgrad::text
