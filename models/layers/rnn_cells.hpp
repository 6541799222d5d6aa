// Recurrent cells shared by the models: LSTM (single and stacked) and GRU, built only from
// primitive ops (every gradient comes from the ops' checked backward rules).
//
// Conventions (B batch, T time, H hidden size):
//   - parameters live in a ParameterSet under a name prefix, e.g. "enc1.lstm.W_x";
//   - one matmul per step computes every gate of the whole batch from the hidden state; the input
//     projection is a second one, or none at all when the inputs were projected for all time steps
//     up front with project_inputs() (one [B*T, in] x [in, G*H] GEMM, then step_projected()), or
//     only the part of the input that the steps produce when the rest is known up front
//     (LstmCell::SplitInput; layers::TokenLstm projects an embedding table that way).
//   - weights are initialised Glorot-uniform over the fused [in + H, G*H] matrix (G gates), the
//     limit TensorFlow's LSTMCell/GRUCell use, with input and hidden blocks drawn from one rng.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/parameter.hpp"
#include "engine/rng.hpp"
#include "engine/tape.hpp"

namespace memgrad {

// A constant on `tape` (zeros for initial states, 0/1 masks); same as tape.constant(), kept as a
// free function for the models that call it.
Var constant_leaf(Tape& tape, const Shape& shape, DType dtype, double value);

// ------------------------------------------------------------------------------------------ LSTM

struct LstmState {
  Var h;  // [B,H]
  Var c;  // [B,H]
};

// Hochreiter & Schmidhuber's LSTM with forget gate (Gers et al. 2000), no peepholes:
//     [i f g o] = x W_x + h_prev W_h + b                    (gate blocks in this order, H each)
//     c = sigmoid(f) * c_prev + sigmoid(i) * tanh(g)
//     h = sigmoid(o) * tanh(c)
// Parameters: "<prefix>.W_x" [in,4H], "<prefix>.W_h" [H,4H], "<prefix>.b" [4H]. The bias is zero
// except the forget block b[H:2H], initialised to 1 (Gers et al.; TensorFlow's forget_bias=1.0), so
// the cell remembers by default at the start of training.
class LstmCell {
 public:
  LstmCell(ParameterSet& params, const std::string& prefix, int64_t input_size, int64_t hidden,
           Rng& rng);

  int64_t input_size() const { return input_size_; }
  int64_t hidden() const { return hidden_; }
  const std::string& prefix() const { return prefix_; }

  // h = c = 0, [batch, H] (constant leaves).
  LstmState zero_state(Tape& tape, int64_t batch, DType dtype) const;
  // One step: x [B,in] -> the new state.
  LstmState step(Tape& tape, Var x, const LstmState& prev) const;
  // x W_x + b for a whole sequence in one GEMM: xs [B,T,in] (or [B,in], [T,B,in], any rank 2-4 with
  // last dim in) -> [..., 4H]. Slice step t out of it and feed it to step_projected().
  Var project_inputs(Var xs) const;
  // One step from an already projected input xw_t = x_t W_x + b, [B,4H].
  LstmState step_projected(Tape& tape, Var xw_t, const LstmState& prev) const;

  // An input [x_t ; r_t] whose leading part x_t (k features) is known for every step before the
  // first one (embedded tokens), while r_t comes as the steps go (memory reads, an attention
  // context). x's share x W_x[:k] + b is then one product up front: over all steps' x, or over an
  // embedding table whose rows the steps look up (V rows instead of B*T, so fewer FLOPs than even
  // one big GEMM). Each step adds r_t W_x[k:] + h W_h. SplitInput holds one tape's row blocks of
  // W_x: make it once per forward pass, not per step (each block is a copy).
  struct SplitInput {
    int64_t leading = 0;
    Var w_lead, w_rest;  // W_x[:k] [k,4H]; W_x[k:] [in-k,4H] (undefined when k = in)
  };
  SplitInput split_input(Tape& tape, int64_t leading) const;
  // xs [..., k] -> x W_x[:k] + b, [..., 4H].
  Var project_leading(const SplitInput& split, Var xs) const;
  // One step from xw_t = x_t W_x[:k] + b [B,4H] and r_t [B,in-k] (undefined when k = in).
  LstmState step_split(Tape& tape, const SplitInput& split, Var xw_t, Var rest,
                       const LstmState& prev) const;

 private:
  std::string prefix_;
  int64_t input_size_, hidden_;
  Parameter *w_x_, *w_h_, *b_;
};

// L stacked LSTM layers: layer 0 reads the input, layer l > 0 reads the h of layer l - 1. Layer l's
// parameters are "<prefix>.l<l>.W_x" and so on. The state is one LstmState per layer, updated in
// place by step() (no allocation per step).
class StackedLstm {
 public:
  StackedLstm(ParameterSet& params, const std::string& prefix, int64_t input_size, int64_t hidden,
              int64_t layers, Rng& rng);

  int64_t input_size() const { return cells_.front().input_size(); }
  int64_t hidden() const { return cells_.front().hidden(); }
  int64_t layers() const { return int64_t(cells_.size()); }
  const LstmCell& layer(int64_t l) const { return cells_[size_t(l)]; }

  // One zero state per layer.
  std::vector<LstmState> zero_state(Tape& tape, int64_t batch, DType dtype) const;
  // One step of every layer: x [B,in]; `state` (one entry per layer) is replaced by the new states.
  // Returns the top layer's h [B,H].
  Var step(Tape& tape, Var x, std::span<LstmState> state) const;
  // Layer 0's input projection for a whole sequence (see LstmCell::project_inputs) and the
  // matching step.
  Var project_inputs(Var xs) const { return cells_.front().project_inputs(xs); }
  Var step_projected(Tape& tape, Var xw_t, std::span<LstmState> state) const;

 private:
  Var step_upper(Tape& tape, std::span<LstmState> state) const;
  std::vector<LstmCell> cells_;
};

// ------------------------------------------------------------------------------------------- GRU

// The GRU of Cho et al. 2014 (Eqs. 5-8), with the reset gate applied BEFORE the recurrent product
// of the candidate, as in the paper (the cuDNN/PyTorch variant applies it after: r * (h U_n + b)):
//     [r z] = sigmoid(x W_r,z + h_prev U_rz + b_rz)
//     n     = tanh(x W_n + (r * h_prev) U_n + b_n)
//     h     = z * h_prev + (1 - z) * n           (z = 1 keeps the previous state)
// Parameters: "<prefix>.W_x" [in,3H] (blocks r, z, n), "<prefix>.U_rz" [H,2H], "<prefix>.U_n"
// [H,H], "<prefix>.b" [3H]: the r and z blocks start at `gate_bias` (0 by default; TensorFlow's
// GRUCell starts them at 1, so that a new cell keeps sigmoid(1) = 73 % of its state per step),
// the candidate's at 0. Because r multiplies h before U_n, a step takes two recurrent
// products ([B,H]x[H,2H], then [B,H]x[H,H]).
class GruCell {
 public:
  GruCell(ParameterSet& params, const std::string& prefix, int64_t input_size, int64_t hidden,
          Rng& rng, double gate_bias = 0.0);

  int64_t input_size() const { return input_size_; }
  int64_t hidden() const { return hidden_; }
  const std::string& prefix() const { return prefix_; }

  Var zero_state(Tape& tape, int64_t batch, DType dtype) const;  // [batch, H] zeros
  Var step(Tape& tape, Var x, Var h_prev) const;                 // x [B,in] -> h [B,H]
  // x W_x + b for a whole sequence: [..., in] -> [..., 3H].
  Var project_inputs(Var xs) const;
  Var step_projected(Tape& tape, Var xw_t, Var h_prev) const;  // xw_t [B,3H]

 private:
  std::string prefix_;
  int64_t input_size_, hidden_;
  Parameter *w_x_, *u_rz_, *u_n_, *b_;
};

}  // namespace memgrad
