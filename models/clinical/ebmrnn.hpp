// EBmRNN, the explicit-blurred memory RNN (Chakraborty, Wang, Hu & Sow 2020, section 2 and
// Appendix A.1; ../shared/papers/ebmrnn-explicit-blurred-memory.txt), and EmRNN, its variant
// without the blurred memory (section 2: "a variant of EBmRNN that doesn't have access to blurred
// memory"), registered as "ebmrnn" and "emrnn" for the physionet2012 task (in-hospital mortality
// from the first 48 hours; the batch fields: tasks/physionet2012.hpp,
// models/clinical/mortality.hpp). The memories are ebmrnn_memory.hpp.
//
// One step t, in the paper's order ("Once memories are read, the controller updates the memory
// banks for the next state"):
//   controller (Eq. 4): h_t = GRU stack([x_t ; r_{t-1}]) (section 3: "a 2-layered GRU with
//     dropout", dropout between the layers), and one linear interface on the top layer's h_t
//     giving [k^E, k^B, m_t, e_t, gamma_t] (layout below; gamma_t of Eq. 11 = sigma(a_gamma.h_t +
//     b_gamma) is the interface's last column);
//   K reads (Eq. 5-7) from E_{t-1} and B_{t-1}, each fused by its read gate g_t;
//   usage (Eq. 11) from this step's explicit read weights;
//   explicit write (Eq. 9 while a slot is free, else Eq. 10-12 evicting one slot);
//   blurred write (Eq. 13-14) of a mix of m_t and the evicted content m^_t (0 while E has a free
//     slot, so B is written at every step, as Eq. 13-14 have no condition).
// Output (Eq. 8, one logit for the binary task; notes section 5.10): only the last step is scored,
//   logit = W_y r_T + b_y, loss = mean bce_with_logits.
//
// ---- Config keys for what the paper leaves open (notes section 5; defaults first)
//   read_mode "hops" | "parallel" (5.5). The paper: "The read operations are repeated K times to
//     generate K hops" and Fig. 3's "4 hops of memory for read", with one pair of keys per step
//     (Eq. 4). hops (default, the paper): hop 1 reads with k^E, k^B; hop k+1 reads with the keys
//     plus hop k's fused read r^(k) (MemN2N-style, u^{k+1} = u^k + o^k); r_t = r^(K). The
//     planning notes default to parallel (the reference code's R read heads): K pairs of keys,
//     r_t = the mean of the K fused reads. Where the notes and the paper disagree we follow the
//     paper. The read gate's weights are shared by the K reads.
//   temperature 0.3 (5.2): Gumbel-softmax tau of reads and evictions. It scales the
//     straight-through gradient only: the hard sample is argmax(logits + g) whatever tau is
//     (reference-notes section 10), so tau cannot make the choices less noisy (the notes' 5.2
//     says it can; it cannot for hard samples).
//   logit_scale 1 (ours, not the paper's): the logits of those Gumbel choices are multiplied by it
//     first. Cosines lie in [-1, 1] and Eq. 11's 1 - (w~ + gamma u) in a narrow range, against
//     Gumbel noise of sd 1.28, so at 1 (the paper's equations) training reads and evicts nearly
//     at random while evaluation takes the argmax; larger values make the training choices
//     follow the similarities.
//   blurred_write "similar" | "dissimilar" (5.3): the sign in Eq. 14 (the equation's S, or the
//     text's "similar to Eq. 10").
//   erase_activation "sigmoid" | "softmax" (5.4): e_t's activation (softmax over D is the
//     reference code's, treated there as a bug).
//   word 16 and blurred_slots 8 (5.6): D and N^B (the notes suggest D = hidden, N^B = N^E).
//   blurred_init 0 (5.7): B_0 filled with this value (the reference code draws uniform(0, 1)).
//   eval_noise false (5.8): evaluation chooses slots by argmax, no Gumbel noise; true samples.
//   usage_gradient "through" | "stopped": Eq. 11 as written, or the read weights under
//     stop-gradient as the reference code (the stopped variant cannot be checked against finite
//     differences of the whole model, so it has no gradient-check variant).
//   output_from "read" | "read_and_hidden": Eq. 8's y_t from r_t only, or from [r_T ; h_T] as the
//     reference code's output.
//   straight_through "sample" | "surrogate": surrogate makes every Gumbel-softmax return its
//     y_soft (StraightThrough::surrogate) for gradient checks; never for training.
// Other keys: hidden 16 (controller C), controller_layers 2, dropout 0.3 (between the layers),
//   slots 8 (N^E), reads 4 (K), alpha 0.7 (alpha_E, fixed as in section 3), blurred (true for
//   ebmrnn, false for emrnn: no B, no k^B, e_t or Eq. 13-14, and g_t = 1 so r_t = ReLU(W_r^E r^E
//   + b_r)). input_size, feature_size, output_size, steps come from the task.
//
// Interface layout of a row (Linear H -> width): explicit keys (R*D, read-major), blurred keys
//   (R*D; ebmrnn), m_t (D), e_t (D; ebmrnn), gamma_t logit (1), with R = K (parallel) or 1 (hops).
//   No activation on keys and m_t (the paper gives none; keys only enter cosines).
// Before any slot is filled (t = 0) there is nothing to read explicitly: r^E = 0.
// Initialisation: models/layers/linear.hpp's (Glorot weights, zero biases) and GruCell's, except
// b_r = 0.1.
//
// Trace (inspection, batch rows b), per step "t<t>/...":
//   - slot_hour [B, N^E]: the step (hour) whose m is stored in each slot, -1 while empty (Fig. 2)
//   - evicted [B, N^E]: the eviction's one-hot w^{w,E} (all 0 while filling)
//   - read_gate [B, K]: g_t of each read (Fig. 3); absent for emrnn
//   - explicit_read_weights [B, K, N^E], usage [B, N^E], explicit_memory [B, N^E, D]
//     (zero-padded past the filled slots), candidate m_t [B, D], popped m^_t [B, D]
//   - ebmrnn only: blurred_candidate [B, D], erase [B, D], blurred_write_weights [B, N^B],
//     blurred_memory [B, N^B, D]
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/layers/linear.hpp"
#include "models/layers/rnn_cells.hpp"
#include "models/model.hpp"

namespace memgrad {

class EbmrnnModel : public Model {
 public:
  // name "ebmrnn" or "emrnn" (its defaults differ only in "blurred").
  EbmrnnModel(const std::string& name, const nlohmann::json& config, DType dtype, uint64_t seed);
  std::string name() const override { return name_; }
  nlohmann::json config() const override { return config_; }
  ForwardResult forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) override;
  bool supports_shards() const override { return true; }

 private:
  std::string name_;
  nlohmann::json config_;
  int64_t input_ = 0, hidden_ = 0, word_ = 0, slots_ = 0, blurred_slots_ = 0, reads_ = 0;
  double dropout_ = 0, alpha_ = 0, temperature_ = 0, logit_scale_ = 1, blurred_init_ = 0;
  bool blurred_ = true, hops_ = true, similar_write_ = true, erase_softmax_ = false;
  bool stop_usage_ = false, eval_noise_ = false, surrogate_ = false, read_and_hidden_ = false;
  std::vector<GruCell> controller_;
  layers::Linear interface_, gate_, read_blurred_, read_explicit_;
  layers::Linear mix_gate_, mix_input_, mix_evicted_, output_;
};

}  // namespace memgrad
