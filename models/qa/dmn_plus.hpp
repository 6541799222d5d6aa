// Dynamic Memory Network+ (Xiong, Merity & Socher 2016, "Dynamic Memory Networks for Visual and
// Textual Question Answering", section 3) for bAbI, registered as `dmn-plus`. Reads the `babi`
// task's batch (tasks/babi.hpp): story [B, M, J] (the facts before the question, oldest first),
// memory_mask [B, M], query [B, J], answer [B]; `time` is not used. docs/dmn-plus.md has the
// recipe and where we differ from the paper and the public implementations.
//
// Forward (d = embedding_dim, H = hidden, V words, T = passes):
//   Input module. Sentence reader, positional encoding (section 3.1):
//       f_i = sum_j l_j o E[w_ij],  l_jd = (1 - j/J) - (d/D)(1 - 2j/J)   ("paper", J = the padded
//       sentence length), or MemN2N's official l_jd = 1 + 4 (d - (D+1)/2)(j - (J+1)/2) / (D J)
//       ("memn2n"); both are rank 2 (l_jd = a_j + b_d c_j), so f = A E + b o (C E) with
//       bag-of-words matrices A, C [B*M, V]: two GEMMs for all facts.
//     Dropout on f (the paper's "initial sentence encodings").
//     Input fusion layer: a bidirectional GRU over the facts, the two directions summed,
//       <->f_i = GRU_fwd(f_i, <-f_{i-1}) + GRU_bwd(f_i, ->f_{i+1}); padding facts leave both
//       directions' states unchanged.
//   Question module: q = the GRU's last state over the question's word embeddings E[w_t] (its
//     padding words leave the state unchanged).
//   Episodic memory, m^0 = q, passes t = 1..T:
//     z_i^t = [f_i o q ; f_i o m^{t-1} ; |f_i - q| ; |f_i - m^{t-1}|]                  (Eq. 6)
//     Z_i^t = W^(2) tanh(W^(1) z_i^t + b^(1)) + b^(2)                                (Eq. 7)
//       (b^(2) is left out: the same constant added to every score cancels in the softmax, so
//       its gradient is exactly 0)
//     g_i^t = softmax over the sample's real facts of Z_i^t (padding: exactly 0)     (Eq. 8)
//     c^t = h_N of the attention GRU over the facts with gates g_i^t (dmn_gru.hpp, Eq. 10-12)
//     m^t = ReLU(W^t [m^{t-1} ; c^t ; q] + b)   (untied W^t per pass; "tied_memory_update")  (Eq.
//     13)
//   Answer module (single-word answers):
//     "gru" (default, DMN's answer GRU for one step): a = GRU(q, dropout(m^T)): its input is
//       [y_0 ; q] with y_0 = 0 for the first (only) word, so only q's part of W is kept;
//       logits = W^(a) a + b
//     "linear" (the public implementations): logits = W^(a) [dropout(m^T) ; q] + b
//   Loss: cross-entropy of the answer, summed over the batch ("loss": "sum"; "mean" averages),
//     plus (l2 / 2) sum of the squares of every weight but the biases (embedding included).
// W^(1) is kept as two parameters, its rows for [f o q ; |f - q|] and for [f o m ; |f - m|]: the q
// part is computed once per forward, not once per pass (the same function as one [4H, H] matrix).
// Trace (memgrad inspect): "episode/t<k>/attention" g^k [B, M] and "episode/t<k>/memory" m^k
// [B, H] for passes k = 1..T, then "answer_logits".
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/layers/config.hpp"
#include "models/layers/linear.hpp"
#include "models/model.hpp"
#include "models/qa/dmn_gru.hpp"

namespace memgrad {

class DmnPlus : public Model {
 public:
  DmnPlus(const nlohmann::json& config, DType dtype, uint64_t seed);

  std::string name() const override { return "dmn-plus"; }
  nlohmann::json config() const override { return config_; }
  ForwardResult forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) override;

 private:
  // Puts the samples in order of fact count, most first (order_), and fills, in that order, the
  // bag-of-words matrices A, C of the facts, the mask, the question and its word mask, and the
  // answers.
  void build_inputs(const Tensor& story, const Tensor& mask, const Tensor& query,
                    const Tensor& answer);
  Tensor batch_order(const Tensor& sorted) const;
  Var step_active(Tape& tape, const DmnGru& cell, Var xw, int64_t column, Var h, int64_t a,
                  Var gate = Var{}) const;
  // The facts after the input fusion layer, [B, M, H].
  // facts [R, d]: the R real facts, rows `real` of [B*M].
  Var fuse(Tape& tape, Var facts, Var real, int64_t b, int64_t m);
  // The question's last GRU state, [B, H].
  Var read_question(Tape& tape, Var embedding, Var query, int64_t b);
  // (l2 / 2) * sum of the squares of the weights.
  Var weight_penalty(Tape& tape) const;

  nlohmann::json config_;
  int64_t vocab_, sentence_len_, dim_, hidden_, passes_;
  double dropout_, l2_;
  bool sum_loss_, gru_answer_, tied_update_;
  std::string position_encoding_;
  Parameter* embedding_;
  DmnGru fusion_fwd_, fusion_bwd_, question_, episode_, answer_gru_;
  Parameter *att_w1_q_, *att_w1_m_, *att_b1_;
  layers::Linear att_score_, answer_out_;
  std::vector<layers::Linear> memory_update_;  // T layers (1 when tied)
  std::vector<Parameter*> weights_;            // every weight the L2 penalty covers
  // Per-forward data, rebuilt from the batch (memory reused between steps).
  Tensor bag_a_, bag_c_;                       // [R, V]: the real facts only
  std::vector<double> pe_a_, pe_c_;            // a_j, c_j of the position encoding [J]
  Tensor pe_b_;                                // b_d [d]
  Tensor mask_, query_, query_mask_, answer_;  // [B, M], [B, J], [B, J], [B], rows in order_
  Tensor neg_;                                 // [1] = -1e30, the score of a padding fact
  std::vector<Tensor> abs_sign_;               // sign(f - q), sign(f - m^{t-1}): |x| = x o sign(x)
  std::vector<int64_t> counts_;                // facts per sample (batch order)
  std::vector<int64_t> order_, unsort_;  // row p holds sample order_[p]; sample s is row unsort_[s]
  bool sorted_ = false;                  // order_ is not the batch's order
  std::vector<int64_t> active_;          // per fact slot i: rows with a fact there (leading rows)
  std::vector<int64_t> real_, real_sample_;  // the real facts: rows p*M + i of [B*M], and p
  std::vector<char> word_all_;               // per question word position: every sample has one
  int64_t question_steps_ = 0;               // the batch's longest question
};

}  // namespace memgrad
