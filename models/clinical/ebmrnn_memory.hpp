// The two memories of EBmRNN (Chakraborty, Wang, Hu & Sow 2020, "Explicit-Blurred Memory Network
// for Analyzing Patient Electronic Health Records", Appendix A.1), built only from primitive ops:
// every gradient comes from the ops' checked backward rules, none is written by hand here.
//
//   explicit memory E [B, f, D]: exact copies of the candidate memories m_t, f <= N^E slots filled
//     (Eq. 9 appends while a slot is free, so the filled slots are always the leading ones and f
//     is the same for every sample of a batch: E is held as its filled slots only, and nothing is
//     masked). Reads and evictions are hard one-hot choices (Gumbel-softmax, straight-through).
//   blurred memory B [B, N^B, D]: soft DNC-like writes of a mix of m_t and the evicted content.
//
// Conventions: S is cosine similarity with eps 1e-6 inside the norms (ops/nn.hpp
// cosine_similarity; a zero row has similarity 0). A memory looked up several times in a step
// (K hops, then the write) may pass its unit rows normalize(M, 1e-6) once computed (`unit`,
// optional; the same values). K reads happen at once as R rows of keys
// ([B, R, D]) — the model makes them R = K parallel reads or K sequential hops of R = 1.
// Paper errata followed here (../shared/design/wave2-notes/P4-ebmrnn-physionet.md section 5.1):
// u_t is per slot ([B, N^E], the paper's "u_t in R^D" is a typo), and Eq. 12's N^W x D and
// Eq. 14's N x W mean N^E x D and N^B x D.
#pragma once
#include <cstdint>

#include "engine/tape.hpp"
#include "ops/random.hpp"

namespace memgrad::ebm {

constexpr double kEpsilon = 1e-6;  // inside the cosine's norms

// How a hard one-hot choice over slots is made (reads of E, Eq. 5; evictions, Eq. 11).
struct Choice {
  double temperature = 0.3;  // Gumbel-softmax tau: the sample is argmax(logits + g) whatever tau
                             // is; tau scales the straight-through gradient (and the surrogate)
  double scale = 1.0;        // the logits are multiplied by it first (1: the paper's)
  bool noise = true;         // false: one-hot argmax of the logits, no noise and no gradient
                             // (evaluation; notes section 5.8)
  StraightThrough mode = StraightThrough::sample;  // surrogate: gradient checks
};

// logits [..., n] -> one-hot [..., n] along the last axis: GumbelSoftmax_hard(scale * logits,
// tau) with the choice's mode, or one_hot(argmax logits) (first index on ties) as a constant when
// !noise.
Var hard_choice(Var logits, const Choice& choice);

struct Read {
  Var weights;  // [B, R, slots]
  Var vectors;  // [B, R, D]
};
// Eq. 5-6, explicit: w^{r,E} = GumbelSoftmax_hard(S(k^E, E_{t-1})), r^E = w^{r,E} E_{t-1}.
// memory [B, f, D] with f >= 1 filled slots, keys [B, R, D].
Read explicit_read(Var memory, Var keys, const Choice& choice, Var unit = Var{});
// Eq. 5-6, blurred: w^{r,B} = softmax(S(k^B, B_{t-1})), r^B = w^{r,B} B_{t-1}.
Read blurred_read(Var memory, Var keys, Var unit = Var{});

// Eq. 11, first line: u_t = alpha u_{t-1} + (1 - alpha) w^{r,E}_t with w^{r,E}_t the mean of the
// R read weightings (one read in the paper; the mean keeps u in [0, 1]). usage [B, f], read
// weights [B, R, f] -> [B, f]. stop_gradient: the read weights enter as constants (the reference
// code; not the paper's equation).
Var usage_update(Var usage, Var read_weights, double alpha, bool stop_gradient);

// Eq. 9, a free slot left: E_t = [E_{t-1}; m_t]. memory [B, f, D] (or undefined when f = 0),
// candidate [B, D] -> [B, f + 1, D]; usage [B, f] (or undefined) gains the new slot at 0.
Var append(Var memory, Var candidate);
Var append_usage(Var usage, Var like_candidate);

struct Eviction {
  Var retention;  // w~ [B, N]  (Eq. 10)
  Var weights;    // w^{w,E} [B, N], one-hot: the slot replaced (Eq. 11)
  Var popped;     // m^_t [B, D], the evicted content (Eq. 12)
  Var memory;     // E_t [B, N, D]
  Var usage;      // u_t [B, N] with the replaced slot's usage reset to 0
};
// Eq. 10-12, the memory full (f = N):
//   w~      = softmax(1 - S(m_t, E_{t-1}))                                          (10)
//   w^{w,E} = GumbelSoftmax_hard(1 - (w~ + gamma_t u_t))                            (11)
//   m^_t    = E_{t-1}^T w^{w,E};  E_t = E_{t-1} o (1 - w^{w,E} 1_D^T) + w^{w,E} m_t^T   (12)
//   u_t[j]  = 0 for the replaced slot j, written u_t o (1 - w^{w,E}) (the same for a one-hot w,
//             and smooth in the surrogate of a gradient check).
// Eq. 10-11 literally (notes section 5.2): the slot replaced is similar to m_t and little used.
// memory [B, N, D], usage [B, N] (already updated with this step's reads), candidate [B, D],
// gamma [B, 1].
Eviction evict_and_write(Var memory, Var usage, Var candidate, Var gamma, const Choice& choice,
                         Var unit = Var{});

// The weights of Eq. 13 on the tape: W_f = [W_f^i; W_f^E] [2D, D], b_f [D], W_i, W_E [D, D],
// b_m [D].
struct MixWeights {
  Var w_f, b_f, w_i, w_e, b_m;
};
// Eq. 13: f_t = sigma(W_f^i m_t + W_f^E m^_t + b_f) (per dimension),
//         m^B_t = ReLU((1 - f_t) W_i m_t + f_t W_E m^_t + b_m).
// candidate, popped [B, D] (popped = 0 while E has a free slot) -> [B, D].
Var blurred_candidate(Var candidate, Var popped, const MixWeights& w);

struct BlurredWrite {
  Var weights;  // w^{w,B} [B, N^B]
  Var memory;   // B_t [B, N^B, D]
};
// Eq. 14: w^{w,B} = softmax(+-S(m^B_t, B_{t-1})) (+: the paper's equation, the most similar slot;
// -: "similar to Eq. 10", the least similar, as the reference code), and
// B_t = B_{t-1} o (1 - w^{w,B} e_t^T) + w^{w,B} m^B_t^T. memory [B, N^B, D], blurred candidate
// and erase [B, D].
BlurredWrite blurred_write(Var memory, Var blurred_candidate, Var erase, bool similar,
                           Var unit = Var{});

// The weights of Eq. 7 on the tape: a_g = [a_g^B; a_g^E] [2D, 1], b_g [1], W_r^B, W_r^E [D, D],
// b_r [D].
struct GateWeights {
  Var a_g, b_g, w_rb, w_re, b_r;
};
struct Fused {
  Var gate;  // g_t [B, R, 1]
  Var read;  // r_t [B, R, D]
};
// Eq. 7, per read: g_t = sigma(a_g^B . r^B + a_g^E . r^E + b_g),
//                  r_t = ReLU((1 - g_t) W_r^B r^B + g_t W_r^E r^E + b_r).
// blurred, explicit [B, R, D].
Fused fuse_reads(Var blurred, Var explicit_read, const GateWeights& w);

}  // namespace memgrad::ebm
