// LSTM and GRU cells from primitive ops (see rnn_cells.hpp for the equations).
#include "models/layers/rnn_cells.hpp"

#include <array>
#include <cmath>

#include "ops/ops.hpp"

namespace memgrad {
namespace {

// Glorot-uniform over the fused [in + H, gates * H] matrix, drawn as its input block then its
// hidden block.
double fused_glorot_limit(int64_t input_size, int64_t hidden, int64_t gates) {
  return std::sqrt(6.0 / double(input_size + hidden + gates * hidden));
}

void check_sizes(const char* what, const std::string& prefix, int64_t input_size, int64_t hidden) {
  MG_CHECK(input_size > 0 && hidden > 0, what, " '", prefix, "': input size ", input_size,
           " and hidden size ", hidden, " must be positive");
}

// x must be [B, want] and h [B, hidden].
void check_step_input(const char* what, const std::string& prefix, Var x, int64_t want, Var h,
                      int64_t hidden, const char* xname) {
  MG_CHECK(x.defined(), what, " '", prefix, "': undefined ", xname);
  MG_CHECK(x.shape().rank == 2 && x.dim(1) == want, what, " '", prefix, "': ", xname,
           " must be [B, ", want, "], got ", x.shape());
  MG_CHECK(h.defined(), what, " '", prefix, "': undefined previous state");
  MG_CHECK(h.shape() == Shape({x.dim(0), hidden}), what, " '", prefix,
           "': previous state of shape ", h.shape(), " for an input of shape ", x.shape(),
           " (want [", x.dim(0), ", ", hidden, "])");
}

}  // namespace

Var constant_leaf(Tape& tape, const Shape& shape, DType dtype, double value) {
  return tape.constant(shape, dtype, value);
}

// ------------------------------------------------------------------------------------------ LSTM

LstmCell::LstmCell(ParameterSet& params, const std::string& prefix, int64_t input_size,
                   int64_t hidden, Rng& rng)
    : prefix_(prefix), input_size_(input_size), hidden_(hidden) {
  check_sizes("LstmCell", prefix, input_size, hidden);
  const double limit = fused_glorot_limit(input_size, hidden, 4);
  w_x_ = &params.add_uniform(prefix + ".W_x", Shape{input_size, 4 * hidden}, -limit, limit, rng);
  w_h_ = &params.add_uniform(prefix + ".W_h", Shape{hidden, 4 * hidden}, -limit, limit, rng);
  b_ = &params.add(prefix + ".b", Shape{4 * hidden});
  for (int64_t j = hidden; j < 2 * hidden; ++j) b_->value.set(j, 1.0);  // forget gate bias 1
}

LstmState LstmCell::zero_state(Tape& tape, int64_t batch, DType dtype) const {
  Var z = constant_leaf(tape, Shape{batch, hidden_}, dtype, 0.0);
  return {z, z};
}

Var LstmCell::project_inputs(Var xs) const {
  MG_CHECK(xs.defined(), "LstmCell '", prefix_, "': undefined inputs");
  MG_CHECK(xs.shape().rank >= 2 && xs.dim(-1) == input_size_, "LstmCell '", prefix_,
           "': inputs must be [..., ", input_size_, "], got ", xs.shape());
  Tape& tape = *xs.tape;
  return addmm(tape.param(*b_), xs, tape.param(*w_x_));
}

LstmState LstmCell::step(Tape& tape, Var x, const LstmState& prev) const {
  check_step_input("LstmCell", prefix_, x, input_size_, prev.h, hidden_, "input");
  return step_projected(tape, addmm(tape.param(*b_), x, tape.param(*w_x_)), prev);
}

LstmState LstmCell::step_projected(Tape& tape, Var xw_t, const LstmState& prev) const {
  const int64_t H = hidden_;
  check_step_input("LstmCell", prefix_, xw_t, 4 * H, prev.h, H, "projected input");
  MG_CHECK(prev.c.defined() && prev.c.shape() == prev.h.shape(), "LstmCell '", prefix_,
           "': cell state of shape ", prev.c.defined() ? prev.c.shape().str() : "undefined",
           " does not match h of shape ", prev.h.shape());
  Temporaries temps(tape);  // the gates and [h | c] die once h and c are cut out
  Var gates = addmm(xw_t, prev.h, tape.param(*w_h_));  // [B,4H]: i f g o
  // c = f * c_prev + i * g, h = o * tanh(c), as one op (ops/nn.hpp lstm_cell): profiling showed
  // the seven elementwise nodes it replaces costing more than the matrix products.
  Var hc = lstm_cell(gates, prev.c);
  return {temps.keep(slice(hc, 1, 0, H)), temps.keep(slice(hc, 1, H, H))};
}

LstmCell::SplitInput LstmCell::split_input(Tape& tape, int64_t leading) const {
  MG_CHECK(leading > 0 && leading <= input_size_, "LstmCell '", prefix_, "': the known part of an ",
           input_size_, "-wide input must have 1 to ", input_size_, " features, got ", leading);
  SplitInput s;
  s.leading = leading;
  Var w = tape.param(*w_x_);
  if (leading == input_size_) {
    s.w_lead = w;
  } else {
    s.w_lead = slice(w, 0, 0, leading);
    s.w_rest = slice(w, 0, leading, input_size_ - leading);
  }
  return s;
}

Var LstmCell::project_leading(const SplitInput& split, Var xs) const {
  MG_CHECK(xs.defined() && xs.shape().rank >= 2 && xs.dim(-1) == split.leading, "LstmCell '",
           prefix_, "': known inputs must be [..., ", split.leading, "], got ",
           xs.defined() ? xs.shape().str() : "undefined");
  return addmm(xs.tape->param(*b_), xs, split.w_lead);
}

LstmState LstmCell::step_split(Tape& tape, const SplitInput& split, Var xw_t, Var rest,
                               const LstmState& prev) const {
  if (!split.w_rest.defined()) {
    MG_CHECK(!rest.defined(), "LstmCell '", prefix_, "': the whole input is known up front, so a ",
             "step takes no further input");
    return step_projected(tape, xw_t, prev);
  }
  check_step_input("LstmCell", prefix_, rest, input_size_ - split.leading, prev.h, hidden_,
                   "input's step part");
  return step_projected(tape, addmm(xw_t, rest, split.w_rest), prev);
}

StackedLstm::StackedLstm(ParameterSet& params, const std::string& prefix, int64_t input_size,
                         int64_t hidden, int64_t layers, Rng& rng) {
  MG_CHECK(layers >= 1, "StackedLstm '", prefix, "': needs at least one layer, got ", layers);
  cells_.reserve(size_t(layers));
  for (int64_t l = 0; l < layers; ++l)
    cells_.emplace_back(params, prefix + ".l" + std::to_string(l), l == 0 ? input_size : hidden,
                        hidden, rng);
}

std::vector<LstmState> StackedLstm::zero_state(Tape& tape, int64_t batch, DType dtype) const {
  std::vector<LstmState> s;
  s.reserve(cells_.size());
  for (const LstmCell& c : cells_) s.push_back(c.zero_state(tape, batch, dtype));
  return s;
}

Var StackedLstm::step_upper(Tape& tape, std::span<LstmState> state) const {
  for (size_t l = 1; l < cells_.size(); ++l)
    state[l] = cells_[l].step(tape, state[l - 1].h, state[l]);
  return state.back().h;
}

Var StackedLstm::step(Tape& tape, Var x, std::span<LstmState> state) const {
  MG_CHECK(state.size() == cells_.size(), "StackedLstm '", cells_.front().prefix(),
           "': ", state.size(), " states for ", cells_.size(), " layers");
  state[0] = cells_[0].step(tape, x, state[0]);
  return step_upper(tape, state);
}

Var StackedLstm::step_projected(Tape& tape, Var xw_t, std::span<LstmState> state) const {
  MG_CHECK(state.size() == cells_.size(), "StackedLstm '", cells_.front().prefix(),
           "': ", state.size(), " states for ", cells_.size(), " layers");
  state[0] = cells_[0].step_projected(tape, xw_t, state[0]);
  return step_upper(tape, state);
}

// ------------------------------------------------------------------------------------------- GRU

GruCell::GruCell(ParameterSet& params, const std::string& prefix, int64_t input_size,
                 int64_t hidden, Rng& rng, double gate_bias)
    : prefix_(prefix), input_size_(input_size), hidden_(hidden) {
  check_sizes("GruCell", prefix, input_size, hidden);
  const double limit = fused_glorot_limit(input_size, hidden, 3);
  w_x_ = &params.add_uniform(prefix + ".W_x", Shape{input_size, 3 * hidden}, -limit, limit, rng);
  u_rz_ = &params.add_uniform(prefix + ".U_rz", Shape{hidden, 2 * hidden}, -limit, limit, rng);
  u_n_ = &params.add_uniform(prefix + ".U_n", Shape{hidden, hidden}, -limit, limit, rng);
  b_ = &params.add(prefix + ".b", Shape{3 * hidden});
  for (int64_t j = 0; j < 2 * hidden; ++j) b_->value.set(j, gate_bias);
}

Var GruCell::zero_state(Tape& tape, int64_t batch, DType dtype) const {
  return constant_leaf(tape, Shape{batch, hidden_}, dtype, 0.0);
}

Var GruCell::project_inputs(Var xs) const {
  MG_CHECK(xs.defined(), "GruCell '", prefix_, "': undefined inputs");
  MG_CHECK(xs.shape().rank >= 2 && xs.dim(-1) == input_size_, "GruCell '", prefix_,
           "': inputs must be [..., ", input_size_, "], got ", xs.shape());
  Tape& tape = *xs.tape;
  return addmm(tape.param(*b_), xs, tape.param(*w_x_));
}

Var GruCell::step(Tape& tape, Var x, Var h_prev) const {
  check_step_input("GruCell", prefix_, x, input_size_, h_prev, hidden_, "input");
  return step_projected(tape, addmm(tape.param(*b_), x, tape.param(*w_x_)), h_prev);
}

Var GruCell::step_projected(Tape& tape, Var xw_t, Var h_prev) const {
  const int64_t H = hidden_;
  check_step_input("GruCell", prefix_, xw_t, 3 * H, h_prev, H, "projected input");
  Temporaries temps(tape);  // pre-activations and slices die once h is made
  Var rz = sigmoid(addmm(slice(xw_t, 1, 0, 2 * H), h_prev, tape.param(*u_rz_)));
  Var r = slice(rz, 1, 0, H);
  Var z = slice(rz, 1, H, H);
  Var n = tanh(addmm(slice(xw_t, 1, 2 * H, H), mul(r, h_prev), tape.param(*u_n_)));
  // z * h + (1 - z) * n, written as n + z * (h - n): one product fewer.
  return temps.keep(add(n, mul(z, sub(h_prev, n))));
}

}  // namespace memgrad
