// Recurrent Entity Network (Henaff, Weston, Szlam, Bordes, LeCun 2017, "Tracking the World State
// with Recurrent Entity Networks"), as the official Torch code (facebookresearch/MemNN,
// EntNet-babi) builds it for bAbI. Registered as `entnet`; docs/entnet.md has the recipe and where
// it deviates from the paper and the official code.
//
// Shapes: B questions, T sentences (the batch's longest story window, padded), J words per
// sentence, d = embedding_dim, K = memory_slots, V = vocab_size (with the nil word 0).
//
// Two ways of feeding it, one model (config key "per_story"):
//   per question (false, the default; the babi task's "memory" view): a sample is one question
//     and the up to 70 sentences before it (the official code's window); one memory pass per
//     question.
//   per story (true; the babi task's "memory-story" view, tasks/babi_memory_story.hpp, which sets
//     the key itself): a sample is a story with its Q questions at their positions; one memory
//     pass over the story, question k read from the memories as they stand after the
//     question_at[k] sentences before it (all T + 1 states of the pass are kept, stacked, and each
//     question gathers its own). The memory at a question depends only on the sentences before
//     it, so both ways give the same scores for every question whose story prefix fits the window
//     (tests/models/test_entnet.cpp checks it); the view keeps the window for the others (qa3).
//     The loss sums (or averages) over the batch's real questions, as per question.
//   Why the choice is the view's and the key only follows it: what a sample is and which score
//   answers which question is the task's business (tasks/babi_view.hpp); the model only needs to
//   know which fields to read, and a check variant ("per-story") needs the key to pick them.
// Parameters:
//   "E"            [V + K, d]  the embedding; rows V .. V + K - 1 are the slots' keys w_j (the
//                              official tied keys: keys are extra vocabulary entries embedded with
//                              the same table), row 0 (nil) kept zero
//   "story_mask"   [J, d]      multiplicative position mask f of the story encoder (drawn from
//                              N(0, init_std^2) as the official code does; "story_mask_init":
//                              "ones" starts it at 1)
//   "query_mask"   [J, d]      the same for the question (init 1)
//   "gate_bias"    [K]         the official per-slot gate bias b_j ("gate_bias": false drops it,
//                              as the paper)
//   "U", "U.b"     [d, d], [d] candidate: memories (with bias)
//   "V"            [d, d]      candidate: the sentence
//   "W"            [d, d]      candidate: the keys
//   "prelu"        [d]         the candidate's PReLU slopes (init 1); the output's too, as the
//                              official code ("shared_prelu", the default)
//   "H"            [d, d]      output: the read memory
//   "out_prelu"    [d]         the output's own PReLU slopes (init 1), only with "shared_prelu"
//                              false
//   "R"            [d, V]      output: the answer scores over the real vocabulary (column 0 = nil
//                              kept zero)
// Forward (each step of models/qa/entnet.cpp is headed by its formula):
//   s_t = sum_i f_i (.) E[x_ti]                          sentence t, words x_t1..x_tJ (nil adds 0)
//   q   = sum_i f'_i (.) E[y_i]                           the question
//   h_j^0 = w_j
//   g_j = sigmoid(s_t . h_j + s_t . w_j + b_j)
//   h~_j = PReLU(h_j U + b_U + s_t V + w_j W)
//   h_j <- (h_j + g_j h~_j) / ||h_j + g_j h~_j||          only where sentence t is real: a padding
//                                                          sentence leaves h unchanged
//   p_j = softmax_j(q . h_j),  u = sum_j p_j h_j
//   logits = PReLU'(q + u H) R                             [B, V]
//   loss = cross-entropy of the answer, summed over the batch (official; "loss": "mean" averages)
// Trace (ForwardOptions::trace): "t<t>/gate" [B, K], each slot's gate at sentence t, and
// "attention" [B, K] (per story [B, Q, K], a question x slot map), the output's p_j: `memgrad
// inspect` draws the gates as a sentence x slot heatmap.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/model.hpp"

namespace memgrad {

class EntNet : public Model {
 public:
  EntNet(const nlohmann::json& config, DType dtype, uint64_t seed);

  std::string name() const override { return "entnet"; }
  nlohmann::json config() const override { return config_; }
  ForwardResult forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) override;
  // Zeroes the nil word's row of E and column of R, as the official code after every update.
  void after_update() override;

  int64_t slots() const { return slots_; }
  int64_t vocab() const { return vocab_; }

 private:
  ForwardResult forward_story(Tape& tape, const Batch& batch, const ForwardOptions& opts);
  Var memory_pass(Tape& tape, const Tensor& story, const Tensor& mask, const ForwardOptions& opts,
                  std::vector<Var>* states);
  Var answer_scores(Tape& tape, Var h, Var q, Var& attention);

  nlohmann::json config_;
  int64_t vocab_, sentence_len_, dim_, slots_;
  bool gate_bias_, sum_loss_, per_story_;
  double norm_eps_;
  Parameter *embed_, *story_mask_, *query_mask_, *bias_ = nullptr, *u_, *u_bias_, *v_, *w_, *prelu_,
                                                 *h_, *out_prelu_, *r_;
};

}  // namespace memgrad
