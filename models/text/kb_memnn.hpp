// Memory networks over a knowledge base of one page per diagnosis, for multi-label diagnosis from
// a clinical note (C-MemNN paper: Hasan et al. 2017, "Condensed Memory Networks for Clinical
// Diagnostic Inferencing"; equation numbers are the paper's). Four models, one graph:
//
//   memn2n-kb  End-to-End MemN2N (Sukhbaatar et al. 2015), multi-label: keys = values = pages,
//              adjacent tying (the hop-k value table is hop k+1's key table), softmax addressing,
//              u^{k+1} = u^k + o^k, ŷ = σ(W u^{K+1}).
//   kv-memnn   Key-Value MemNN (Miller et al. 2016): keys = pages (A), values = titles (C),
//              softmax addressing, q^{k+1} = R_k (q^k + o^k), ŷ = σ(W q^{K+1}).
//   a-memnn    Averaged MemNN: gated addressing, u^{k+1} = u^k + o^k (Eq. 3), and the averaged
//              state ũ^1 = u^1, ũ^{k+1} = u^{k+1} + ½ ũ^k (the text's "exponential moving
//              average"; Eq. 6 read literally never involves u^{k+1} and only rescales u^1).
//   c-memnn    Condensed MemNN: gated addressing, Eq. 3, and ũ^{k+1} = [u^{k+1} ; D_k ũ^k]
//              (Eq. 4), D_k halving ũ^k's width (K, 3K/2, 7K/4, ...: one D per hop).
//
// Common parts (notation of the paper):
//   Φ(d) = Σ_j E[w_j]                     bag of words, one GEMM of word counts with the table
//   u^1 = Φ_B(x)                           the note (B: [V, K])
//   m_i = Φ_A(page_i)                      keys (A: [V, K])
//   c_i = Φ_C(title_i) P                   values: titles in 32 dims (C: [V, 32]), P: [32, K]
//   softmax addressing  p_i = softmax_i(u^k · m_i)
//   gated addressing    p_i = σ(g_i),  g_i = w2 · relu(W_u u^k + W_m m_i + W_x (u^k ⊙ m_i) + b1)
//                       + b2  (the paper's FNN with a sigmoid output; its inputs and depth are
//                       not given: [u; m; u ⊙ m], one hidden layer, docs/codiesp-kb.md)
//   o^k = Σ_i p_i c_i (Eq. 2)
//   response (a-/c-memnn; Eq. 5 + "Training"): z = [W u^{K+1} ; ũ^{K+1}], dropout 0.5,
//                       ŷ = σ(F z + b)  (F: the "fully connected layer on top of Eq. 5")
//   loss = Σ_r BCE(ŷ_r, y_r) + slot_loss · Σ_hops Σ_i BCE(p_i, y_i)  (the paper's "cross entropy
//          from prediction memory slots using addressing schema"; gated addressing only, slot i
//          being label i's page), averaged over the batch.
// Every matrix is one GEMM over the batch; the attention over all L pages is one [B, L] product
// (softmax) or one [B*L, K] x [K, H] product (gated).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/layers/linear.hpp"
#include "models/model.hpp"

namespace memgrad::text {

enum class KbModelKind { memn2n, kv, averaged, condensed };

class KbMemNN : public Model {
 public:
  KbMemNN(KbModelKind kind, const nlohmann::json& config, DType dtype, uint64_t seed);
  std::string name() const override;
  nlohmann::json config() const override { return config_; }
  ForwardResult forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) override;
  bool supports_shards() const override { return true; }

 private:
  Var embed(Tape& tape, const Tensor& counts, Parameter& table) const;
  // p [B, L] and, for gated addressing, the gate logits g [B, L].
  std::pair<Var, Var> address(Tape& tape, Var u, Var m) const;

  KbModelKind kind_;
  nlohmann::json config_;
  int64_t vocab_ = 0, labels_ = 0, dim_ = 0, title_dim_ = 0, hops_ = 0, hidden_ = 0;
  bool gated_ = false;
  double slot_loss_ = 0, dropout_ = 0;
  Parameter *b_table_ = nullptr, *a_table_ = nullptr, *c_table_ = nullptr;
  std::vector<Parameter*> hop_tables_;                // memn2n: A^1 .. A^{K+1} (adjacent tying)
  layers::Linear title_proj_;                         // P: 32 -> K (kv, a, c)
  std::vector<layers::Linear> rotations_, condense_;  // kv: R_k; c: D_k
  layers::Linear gate_u_, gate_m_, gate_x_, gate_out_;
  layers::Linear w_, out_;  // W (K -> L); a/c: F ([L + width(ũ)] -> L)
};

}  // namespace memgrad::text
