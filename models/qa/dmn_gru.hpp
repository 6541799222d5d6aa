// The two gated recurrent units of DMN+ (Xiong, Merity & Socher 2016, "Dynamic Memory Networks
// for Visual and Textual Question Answering"), built from primitive ops.
//
// The paper's GRU (section 3, Eqs. 1-4) applies the reset gate AFTER the recurrent product,
//     u_i = sigmoid(W^u x_i + U^u h_{i-1} + b^u)
//     r_i = sigmoid(W^r x_i + U^r h_{i-1} + b^r)
//     h~_i = tanh(W x_i + r_i o U h_{i-1} + b^h)
//     h_i = u_i o h~_i + (1 - u_i) o h_{i-1}
// unlike rnn_cells.hpp's GruCell (Cho et al.: r o h_{i-1} before U), so one [H, 3H] product per
// step serves every gate. The attention-based GRU (section 3.3, Eqs. 10-12) has no update gate:
// the attention gate g_i of fact i, one scalar per sample, takes its place,
//     h_i = g_i o h~_i + (1 - g_i) o h_{i-1}.
// Parameters "<prefix>.W" [in, G*H], "<prefix>.U" [H, G*H], "<prefix>.b" [G*H] with G = 3 gate
// blocks (u, r, candidate) or 2 (r, candidate) for the attention GRU. Xavier (Glorot-uniform)
// weights as the paper's recipe, each block's limit that of its own [in, H] or [H, H] matrix;
// zero biases.
#pragma once
#include <cstdint>
#include <string>

#include "engine/parameter.hpp"
#include "engine/rng.hpp"
#include "engine/tape.hpp"

namespace memgrad {

class DmnGru {
 public:
  DmnGru() = default;
  // attention: the attention-based GRU (2 blocks) instead of the GRU (3 blocks).
  DmnGru(ParameterSet& params, const std::string& prefix, int64_t input_size, int64_t hidden,
         bool attention, Rng& rng);

  int64_t input_size() const { return input_size_; }
  int64_t hidden() const { return hidden_; }
  int64_t blocks() const { return attention_ ? 2 : 3; }

  // x W + b for every step at once: [..., in] -> [..., G*H] (one GEMM over all steps).
  Var project(Var xs) const;
  // One step from the projected input, columns [column, column + G*H) of xw [B, K] (the
  // projections of every step side by side: each gate block is sliced from it directly), and
  // h_prev [B, H]. The attention GRU needs `gate` [B, 1] (g_i); the GRU takes none.
  Var step(Tape& tape, Var xw, int64_t column, Var h_prev, Var gate = Var{}) const;

 private:
  std::string prefix_;
  int64_t input_size_ = 0, hidden_ = 0;
  bool attention_ = false;
  Parameter *w_ = nullptr, *u_ = nullptr, *b_ = nullptr;
};

}  // namespace memgrad
