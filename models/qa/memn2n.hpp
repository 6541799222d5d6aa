// End-To-End Memory Network (Sukhbaatar, Szlam, Weston, Fergus 2015), as the official Matlab code
// builds it for bAbI (facebookarchive/MemNN, MemN2N-babi-matlab): K hops, adjacent weight tying,
// position encoding, temporal encoding by time words, linear start. Registered as `memn2n`.
//
// Forward (B questions, M memories of J words, embedding d, V words, S = memory_size time words):
//   memory i holds words x_i1..x_iJ and, with temporal encoding, the time word x_iJ' (J' = J + 1)
//   of id V + tau - 1 for its temporal index tau >= 1 (nil on empty slots)
//   embed_T(x) = sum_j l_j * T[x_j]            (l: the position encoding below)
//   u^1 = embed_{A^1}(question)                 (B = A^1)
//   hop k = 1..K:  m = embed_{A^k}(memories), c = embed_{C^k}(memories)
//                  p = softmax over the memory_size slots of u^k . m_i, where an empty slot
//                      (nil words) scores 0 and gets weight e^0 / Z but adds nothing to o, as in
//                      the official code ("mask_empty_slots": true leaves empty slots out: p = 0);
//                      during linear start no softmax, p_i = (u^k . m_i) * mask_i
//                  o^k = sum_i p_i c_i,   u^{k+1} = u^k + o^k
//   logits = u^{K+1} (C^K)^T  over all V + S rows (W^T = C^K), predictions [B, V + S]
//   loss = cross-entropy of the answer, SUMMED over the batch (official; "loss": "mean" averages)
// How embed is computed: the official l is rank 2, l[j, k] = 1 + alpha_k beta_j with
// alpha_k = 4 (k - (d+1)/2) / (d J') and beta_j = j - (J'+1)/2, so
//   embed_T(x) = N T + alpha * (P T),  N[v] = #{j : x_j = v},  P[v] = sum_{j : x_j = v} beta_j,
// exactly. N and P are bag-of-words matrices [B, M, V + S] (and [B, V + S] for the question)
// built from the ids once per forward; each embedding is two GEMMs over the whole batch, and each
// table's gradient two GEMMs (instead of a [B, M, J', d] gather, product and sum per table).
// Adjacent tying leaves K + 1 tables [V + S, d], each one Parameter:
//   "A1_B" (A^1 = B), "C1_A2" (C^1 = A^2), ..., "C{K-1}_A{K}", "C{K}_W" (C^K = W^T).
// Position encoding, as implemented by the official code (and the TF port;
// models/qa/position_encoding.hpp): with J' = J + 1 columns (the time word takes column J';
// J' = J without temporal encoding),
//   l[k, j] = 1 + 4 (k - (d+1)/2) (j - (J'+1)/2) / (d J'),   k = 1..d, j = 1..J'
// memories use columns 1..J', the question columns 1..J. position_encoding false: l = 1 (BoW).
// Gradient checks: the bAbI check batch of models/qa/babi_check.hpp.
// The nil word (id 0) has an all-zero row in every table, kept zero by after_update().
//
// Schedule hooks: linear start (LS) is on from the first step when "linear_start" is true; it
// ends at on_epoch_end() after "ls_epochs" epochs ("ls_rule": "epochs", the official schedule)
// or at the first epoch whose validation loss does not decrease ("ls_rule": "validation", the
// paper's rule). During LS lr_multiplier() includes "ls_lr_multiplier". With "lr_decay_restart"
// (official train_linear_start.m) it also replaces the trainer's halving, which counts the epochs
// of the whole run, by the official one: none during LS, then halved at epochs H, 2H, ... (from
// 1) of the second phase, H = "lr_halve_every_epochs" (the trainer's key; one flag sets both).
// The official run is 20 LS epochs + 100 at lr 0.005 (the defaults: --epochs 120, --lr 0.005).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/model.hpp"

namespace memgrad {

class MemN2N : public Model {
 public:
  MemN2N(const nlohmann::json& config, DType dtype, uint64_t seed);

  std::string name() const override { return "memn2n"; }
  nlohmann::json config() const override { return config_; }
  ForwardResult forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) override;

  std::string on_epoch_end(int64_t epoch, double validation_loss) override;
  void after_update() override;
  double lr_multiplier() const override;
  nlohmann::json training_state() const override;
  void set_training_state(const nlohmann::json& state) override;

  bool linear_start_active() const { return linear_start_; }
  void set_linear_start(bool on) { linear_start_ = on; }
  int64_t hops() const { return hops_; }
  int64_t table_rows() const { return vocab_ + (te_ ? memory_size_ : 0); }
  // The table used as A^k (k = 1..K) or C^k (k = 1..K); A^{k+1} and C^k are the same Parameter.
  Parameter& table_a(int64_t k) { return *tables_[size_t(k - 1)]; }
  Parameter& table_c(int64_t k) { return *tables_[size_t(k)]; }

 private:
  // Fills the bag-of-words matrices of the memories and the question from the batch's ids.
  void build_bags(const Tensor& story, const Tensor& time, const Tensor& query);

  nlohmann::json config_;
  int64_t vocab_, sentence_len_, memory_size_, dim_, hops_;
  bool pe_, te_;
  bool sum_loss_;
  std::string ls_rule_;
  int64_t ls_epochs_;
  double ls_lr_multiplier_;
  bool lr_decay_restart_;
  int64_t halve_every_;  // the trainer's lr_halve_every_epochs (0: no halving)
  bool mask_empty_;
  std::vector<Parameter*> tables_;  // K + 1 tables, see above
  bool linear_start_ = false;
  double last_validation_loss_ = 0;
  bool have_validation_loss_ = false;
  int64_t epochs_done_ = 0;   // epochs of the run completed (the last on_epoch_end)
  int64_t ls_end_epoch_ = 0;  // the epoch after which LS ended (0: no LS)
  // Per-forward data, rebuilt from the batch (memory reused between steps).
  Tensor count_mem_, pos_mem_;      // [B, M, rows]
  Tensor count_query_, pos_query_;  // [B, rows]
  Tensor alpha_;                    // [d]
  Tensor neg_;                      // [1] = -1e30: the score of a padding slot under the softmax
  Tensor empty_score_;              // [B, 1]: log(number of empty slots) (mask_empty_slots false)
  std::vector<double> beta_;        // [J']
};

}  // namespace memgrad
