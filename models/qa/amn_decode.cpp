// The AMN decode (§4.3, Eqs. 16-19); see models/qa/amn.hpp (gaps 4 and 10).
#include <cmath>

#include "models/qa/amn_steps.hpp"
#include "ops/ops.hpp"

namespace memgrad::qa::amn {
namespace {

// A non-member's share of a bank's attention is scaled by kMaskFloor: log(m + kMaskFloor) adds
// about -18 to its score, and its gradient with respect to m stays bounded (the share it scales
// is itself ~kMaskFloor), so straight-through gradients reach the memberships.
constexpr double kMaskFloor = 1e-8;
// occ_m = 1 - prod_v (1 - (1 - kOccFloor) m_v): 0 for an empty bank, ~1 for a bank with members,
// with bounded gradients (kOccFloor keeps each factor above 0).
constexpr double kOccFloor = 1e-3;

}  // namespace

// w [B, V, d], s [B, V], q [B, d], banks [B, L, V], exists [B, L], read [B, L] (the banks decoded):
//   C = s (.) w                                                                    (16)
//   ps_m = softmax_v(<C_v, q> + log(m_v + floor))    attention over bank m's entities (17)
//   g = sum_m d_m <ps_m, C>,  d_m = read_m exists_m occ_m e^{tau m} / sum (...)     (18)
//   (tau learned; with "learned-positive" tau = e^theta, theta learned, so later banks always
//   weigh more)
//   logits = PReLU(g H + q) R                                                       (19)
Decoded decode(Tape& tape, const Params& p, const Settings& set, Var w, Var s, Var q, Var banks_all,
               Var exists_all, Var read) {
  const int64_t b = w.shape()[0], v = w.shape()[1], d = w.shape()[2];
  const int64_t l = banks_all.shape()[1];
  const DType dt = w.dtype();
  const Var c = mul(w, reshape(s, Shape{b, v, 1}));
  const Var score = reshape(bmm(c, reshape(q, Shape{b, d, 1})), Shape{b, 1, v});
  const Var ps = softmax(add(score, log(add_scalar(banks_all, kMaskFloor))));
  const Var per_bank = bmm(ps, c);  // [B, L, d]
  const Var occ = scale_shift(
      exp(sum_axis(log(scale_shift(banks_all, -(1.0 - kOccFloor), 1.0)), 2)), -1.0, 1.0);
  const Var index = tape.constant(Shape{l}, dt, 0.0);
  for (int64_t m = 0; m < l; ++m) tape.value(index.id).set(m, double(m));
  Var tau;  // gap 4: learned (any sign), learned and kept positive as e^theta, or 1
  if (set.learned_weighting)
    tau = set.positive_temperature ? exp(tape.param(*p.temp)) : tape.param(*p.temp);
  const Var growth = tau.defined() ? exp(mul(index, tau)) : exp(index);
  const Var raw = mul(mul(mul(exists_all, occ), read), growth);
  const Var weights = div(raw, add_scalar(sum_axis(raw, 1, true), 1e-12));
  const Var g = reshape(bmm(reshape(weights, Shape{b, 1, l}), per_bank), Shape{b, d});
  const Var y = prelu(addmm(q, g, tape.param(*p.h)), tape.param(*p.out_prelu));
  return {matmul(y, tape.param(*p.r)), ps, weights, tau.defined() ? tau.value().at(0) : 1.0};
}

}  // namespace memgrad::qa::amn
