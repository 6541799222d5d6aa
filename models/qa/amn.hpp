// Adaptive Memory Network (AMN; "Adaptive Memory Networks", anonymous ICLR 2018 submission,
// ../shared/papers/amn-adaptive-memory-networks.txt), for bAbI. Registered as `amn`; docs/amn.md
// has the recipe and the measurements. No public implementation exists: everything is from the
// paper, with each gap it leaves filled by a config key (the "Gaps" list below, each tested in
// tests/models/test_amn.cpp).
//
// Shapes: B questions, T sentences (the batch's story window, oldest first, padded), J words a
// sentence, V = vocab_size (0 = nil), d = embedding_dim, L = max_banks. An entity is a word id of
// the story (its state w [d] and relevance strength s in [0, 1]); entity arrays are [B, V, ...]
// indexed by word id, so the per-story dictionary D of Eq. 3 is a [B, V, d] table. A bank is a
// membership row [V] (0/1): m_0 holds every entity seen so far (with "bank_moves" "migrate": those
// not moved up); banks m_1..m_{L-1} exist or not.
//
// Per sentence t (Algorithm 1; each step's code is headed by its equation):
//   Eqs. 1-3  u_i = E[w_i], w_i = GRU_enc(u_i, w_{i-1}) over the sentence's words, D[w_i] += w_i;
//             w_N = the last word's output                        (models/qa/amn_encoder.cpp)
//   Eq. 4     the question the same way: w_Nq
//   Eq. 13    Pi_au: a new entity enters m_0 with state D[id]; an entity of sentence t seen before
//             is updated w <- GRU_au(w_N, w)                       (models/qa/amn_banks.cpp)
//   Eqs.14-15 Pi_prop: a = prop_t w (prop_t from the word graph A, models/qa/amn_story.hpp),
//             w <- GRU_prop(a, w) for the entities that hear a neighbour
//   Eqs. 5-8  SGRU: s <- z s + (1 - z) s~ for the entities seen so far (models/qa/amn_strength.cpp)
//   Eqs. 9-11 Pi_new: p_new = sigmoid(FC(m_last (.) [w_0..w_V])), H ~ Bernoulli(p_new); H = 1
//             creates the bank after the last one (none past L - 1)
//   Eq. 12    Pi_move: p_i = sigmoid(v . (s_i w_i) + b), H_i ~ Bernoulli(p_i); H_i = 1 copies i
//             from every bank m_k holding it into m_{k+1} (when m_{k+1} exists; gap 15: or moves)
// Then the decode (models/qa/amn_decode.cpp):
//   Eq. 16    C = s (.) w
//   Eq. 17    ps_m = softmax over the entities of bank m of <C_v, w_Nq>
//   Eq. 18    g = sum_m d_m <ps_m, C>, d_m = exists_m occ_m e^{tau m} / sum_m' (...)
//   Eq. 19    logits = PReLU(g H + w_Nq) R
// Loss (§4.4, models/qa/amn_losses.cpp), training only: cross-entropy + strength_loss * L_s +
// bank_loss * L_b + move_loss * L_move, each KL term a mean (L_s over seen entities and sentences,
// L_b over real sentences, L_move as L_s).
//
// Decisions (Eqs. 9-10): H = bernoulli_st(p) (ops/random.hpp), forward the sample, backward the
// straight-through identity; "ctrl_grad": "loss_only" detaches H instead, as the paper's text
// ("detaches H ... p ... has a special computed loss"), so that p learns from L_b / L_move only.
// "decisions": "surrogate" runs bernoulli_st in its surrogate mode (forward = p): the gradient
// checks use it, so that every path through the decisions is checked against the declared
// surrogate with the noise replayed. Bank membership and existence are graph values built from H
// (m_{k+1} <- m_{k+1} + (1 - m_{k+1}) m_k H), 0/1 when sampling and soft in surrogate mode.
// The paper does not say whether inference samples too. "inference_decisions": "sample" (the
// default: as in training, so a test error carries the draws' noise) or "most_likely" (ours:
// H = [p > 0.5], the same answers and banks on every evaluation).
//
// Gaps of the paper and our choices (config key: default; alternative):
//   1. Eq. 6 <s, w_Nq> pairs a scalar with a vector. "relevance_gate": "similarity" reads the text
//      ("a dot product between the current word states and question state"):
//      r = 1 - sigmoid(U_r s (w . w_Nq)), U_r a scalar; "literal": r = 1 - sigmoid(s (U_r . w_Nq)).
//   2. Eq. 12 "q is the identity" on the vector s_i w_i cannot be a probability. "move_prob":
//      "linear": p_i = sigmoid(v . (s_i w_i) + b); "strength": p_i = s_i.
//   3. Eq. 11's input [w_0 .. w_i] has a variable length: entity states laid out by word id,
//      [V d], absent entities zero.
//   4. d of Eq. 18 ("an exponential function"): "bank_weighting": "learned": e^{tau m}, tau a
//      learned scalar (init 1), which training can make negative (then earlier banks weigh
//      more, against the paper's intent); "learned-positive": tau = e^theta, theta learned (init
//      0), always positive; "exp": e^{m}. Empty banks weigh 0 (occ_m = 1 - prod(1 - m_v)).
//   5. Pi_prop's "emphasis on l_k": the current sentence's edges get extra weight "recency" (1);
//      a = the mean (not the sum) of the in-neighbours' states, so that a's scale does not grow
//      with the story; only entities with an in-neighbour are updated.
//   6. r of A^r: fixed, "prop_hops" 2 (the paper's alternative is the longest path).
//   7. E[s]: answer's component ~ N(0.75, 0.05) capped at 1, others N(0.3, 0.1) floored at 0;
//      read as variances (sd sqrt(0.05), sqrt(0.1)), then clamped into [0.01, 0.99] for the KL.
//      One draw per entity per step. An answer that is not a story word (yes/no, counts): the
//      components of the question's words (the batch has no supporting facts). The paper's
//      "weighted with a deterministic function of distance from a" (§4.4) has no formula:
//      "relevance_decay" g multiplies a relevant entity's draw by g^k, k its distance from the
//      answer in the word graph with edges taken both ways; default 1 (no weighting, the
//      results before 2026-11-27), docs/results/amn.md has the runs with g < 1. "Connected to
//      the answer node a in a directed graph": "relevance_graph": "component" (the default, the
//      results before 2026-11-29) takes a's undirected component, which in bAbI is nearly the
//      whole story (every sentence shares "to the"); "ancestors" only the nodes with a directed
//      path to a, distances along it, so that the other locations (sinks of their sentences'
//      paths) are no longer relevant.
//   8. L_b's target p^(1 / (beta |l_i|)) with |l_i| = t + 1 (the sentence step): "p_hat" 0.8,
//      "beta" 0.25 (transitive tasks: set p_hat 0.2 by flag; not automatic).
//   9. d unspecified: "embedding_dim" 50.
//  10. "Required banks" at inference: "decode_banks" k > 0 reads only the last k existing banks
//      (0 = all); docs/amn.md says how k is chosen.
//  11. SGRU runs once per sentence (Algorithm 1 runs it twice, lines 6 and 11), and Pi_new comes
//      before Pi_move, so that a new bank is filled in the same sentence ("repeat 8 to 11 once").
//  12. Pi_move has no target in the paper ("secondary loss from Pi_new, Pi_move" without a
//      formula): L_move = KL(p_i || E[s_i]) over the seen entities, "move_loss" 1.
//  13. s^0 ("Xavier normal"): sigmoid of a learned per-word parameter s0 [V], Xavier-normal init.
//  14. The encoder's state across sentences: §4.1's accumulation GRU "captures the entity states
//      through time" and Eq. 2 chains w_{i-1} without saying where a sentence starts.
//      "encoder_state": "sentence" (the default, the results before 2026-11-28) starts it at zero
//      in every sentence; "story" runs it on through the story window's sentences, so that w_N
//      and D carry the sentences before (who "she" or "they" is). Padding words leave it
//      unchanged either way; the question's encoding always starts from zero.
//  15. Does Pi_move copy or move? §3 and §4.2.2 say "copies" and "the same node can exist in two
//      different memory banks"; §4.2.2 item 4 speaks of entities that "have migrated to another
//      bank" and of nodes "removed from a path" when "transferred across banks", and §5's
//      footnote counts the entities across all banks as |V| + epsilon, which copies could not
//      give (ours hold 3.7 |V| on task 1). "bank_moves": "copy" (the default, the results before
//      2026-11-28): m_{k+1} <- m_{k+1} + (1 - m_{k+1}) m_k H; "migrate": i leaves m_k for m_{k+1},
//      so every entity is in exactly one bank and m_0 holds those never moved; "filter"
//      (Algorithm 1's line 10, m_{i+1} <- Pi_move(m_i, n_{m_i}), read as an assignment): every
//      sentence the upper banks are drawn again, m_{k+1} = m_k H_k exists_{k+1} with m_0 = the
//      entities seen and a draw H_k per bank and entity, so an entity sits in m_k with
//      probability p^k and leaves a bank when a later draw drops it.
//
// Ablation: "propagation": false skips Pi_prop (Eqs. 14-15); the word graph is still built.
//
// Trace (ForwardOptions::trace), per sentence t: "t<t>/banks" [B, L, V] membership after the
// sentence, "t<t>/exists" [B, L-1] which of m_1.. exist, "t<t>/strength" [B, V], "t<t>/p_new"
// [B], "t<t>/p_move" [B, V], "t<t>/words" [B, J] the sentence's word ids (the entities' names)
// and "t<t>/edges" [B, J, 2] the path it adds to the word graph A as (from, to) id pairs, zero
// after the last (the edges Pi_prop emphasises); at the end "end/banks", "end/exists" [B, L],
// "end/strength", "bank_weights" [B, L] (d_m, 0 for banks not read) and "attention" [B, L, V]
// (ps_m). tools/figures/amn_fig3.cpp, amn_fig4.cpp draw the paper's Figs. 3 and 4 from them.
// Nothing is recorded or computed for the trace when it is off.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "models/layers/rnn_cells.hpp"
#include "models/model.hpp"
#include "models/qa/amn_inference.hpp"
#include "models/qa/amn_steps.hpp"

namespace memgrad {

class Amn : public Model {
 public:
  Amn(const nlohmann::json& config, DType dtype, uint64_t seed);

  std::string name() const override { return "amn"; }
  nlohmann::json config() const override { return config_; }
  ForwardResult forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) override;
  // Zeroes the nil word's row of E (it is padding, never an entity).
  void after_update() override;

  // Inference figures (models/qa/amn_inference.hpp) over the inference forwards since the reset.
  void reset_inference_stats() override { stats_.reset(banks_); }
  nlohmann::json inference_stats() const override { return stats_.json(); }

  int64_t banks() const { return banks_; }
  int64_t vocab() const { return vocab_; }

 private:
  nlohmann::json config_;
  int64_t vocab_, sentence_len_, dim_, banks_, decode_banks_;
  bool propagation_ = true;             // "propagation": Pi_prop on (false: the ablation)
  bool carry_encoder_ = false;          // "encoder_state" "story" (gap 14)
  double dropout_ = 0.0;                // on the embedded words, in training (ours)
  bool most_likely_inference_ = false;  // "inference_decisions": H = [p > 0.5] at inference
  qa::amn::Settings settings_;
  qa::AmnGraphOptions graph_;
  double relevance_decay_ = 1;
  std::optional<GruCell> enc_, au_, prop_;  // Eqs. 2/4, 13, 15
  qa::amn::Params p_;
  qa::amn::Scratch scratch_;  // per-sample structures, reused across forwards
  qa::amn::InferenceStats stats_;
};

}  // namespace memgrad
