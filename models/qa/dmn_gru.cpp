// DMN+'s GRU and attention-based GRU (see dmn_gru.hpp for the equations).
#include "models/qa/dmn_gru.hpp"

#include <cmath>

#include "ops/ops.hpp"

namespace memgrad {

DmnGru::DmnGru(ParameterSet& params, const std::string& prefix, int64_t input_size, int64_t hidden,
               bool attention, Rng& rng)
    : prefix_(prefix), input_size_(input_size), hidden_(hidden), attention_(attention) {
  MG_CHECK(input_size > 0 && hidden > 0, "DmnGru '", prefix, "': input size ", input_size,
           " and hidden size ", hidden, " must be positive");
  const int64_t g = blocks() * hidden;
  // Xavier per gate block: every block of W is [in, H], every block of U is [H, H].
  const double lw = std::sqrt(6.0 / double(input_size + hidden));
  const double lu = std::sqrt(6.0 / double(2 * hidden));
  w_ = &params.add_uniform(prefix + ".W", Shape{input_size, g}, -lw, lw, rng);
  u_ = &params.add_uniform(prefix + ".U", Shape{hidden, g}, -lu, lu, rng);
  b_ = &params.add(prefix + ".b", Shape{g});
}

// [..., in] -> x W + b, [..., G*H].
Var DmnGru::project(Var xs) const {
  MG_CHECK(xs.defined() && xs.shape().rank >= 2 && xs.dim(-1) == input_size_, "DmnGru '", prefix_,
           "': inputs must be [..., ", input_size_, "], got ",
           xs.defined() ? xs.shape().str() : std::string("undefined"));
  Tape& tape = *xs.tape;
  return addmm(tape.param(*b_), xs, tape.param(*w_));
}

// GRU (Eqs. 1-4), with xw = [W^u x + b^u | W^r x + b^r | W x + b^h] and hu = h_{i-1} U:
//   [u r] = sigmoid(xw[:2H] + hu[:2H]),  h~ = tanh(xw[2H:] + r o hu[2H:]),  h = h + u o (h~ - h).
// Attention GRU (Eqs. 10-12), with xw = [W^r x + b^r | W x + b^h]:
//   r = sigmoid(xw[:H] + hu[:H]),  h~ = tanh(xw[H:] + r o hu[H:]),  h = h + g o (h~ - h).
Var DmnGru::step(Tape& tape, Var xw, int64_t column, Var h_prev, Var gate) const {
  const int64_t H = hidden_, G = blocks();
  MG_CHECK(xw.defined() && xw.shape().rank == 2 && column >= 0 && column + G * H <= xw.dim(1),
           "DmnGru '", prefix_, "': projected input columns [", column, ", ", column + G * H,
           ") of a tensor of shape ", xw.defined() ? xw.shape().str() : std::string("undefined"));
  MG_CHECK(h_prev.defined() && h_prev.shape() == Shape({xw.dim(0), H}), "DmnGru '", prefix_,
           "': previous state must be [", xw.dim(0), ", ", H, "]");
  MG_CHECK(attention_ == gate.defined(), "DmnGru '", prefix_, "': ",
           attention_ ? "the attention GRU needs the step's gate g_i [B, 1]"
                      : "a GRU takes no attention gate");
  if (attention_)
    MG_CHECK(gate.shape() == Shape({xw.dim(0), 1}), "DmnGru '", prefix_, "': gate must be [",
             xw.dim(0), ", 1], got ", gate.shape());
  Temporaries temps(tape);                         // the gates' pieces die once h is made
  const Var hu = matmul(h_prev, tape.param(*u_));  // [B, G*H]
  const int64_t gates = (G - 1) * H;               // sigmoid blocks: u, r or r alone
  const Var sig = sigmoid(add(slice(xw, 1, column, gates), slice(hu, 1, 0, gates)));
  const Var r = attention_ ? sig : slice(sig, 1, H, H);
  const Var cand = tanh(add(slice(xw, 1, column + gates, H), mul(r, slice(hu, 1, gates, H))));
  const Var u = attention_ ? gate : slice(sig, 1, 0, H);
  // u o h~ + (1 - u) o h, written h + u o (h~ - h): one product fewer.
  return temps.keep(add(h_prev, mul(u, sub(cand, h_prev))));
}

}  // namespace memgrad
