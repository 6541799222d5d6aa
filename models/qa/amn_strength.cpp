// The AMN's relevance strengths, the SGRU (§4.1, Eqs. 5-8); see models/qa/amn.hpp (gap 1).
#include "models/qa/amn_steps.hpp"
#include "ops/ops.hpp"

namespace memgrad::qa::amn {

// w [B, V, d] entity states, q [B, d] question state w_Nq, s [B, V] strengths s^{t-1}:
//   z  = sigmoid(U_z w + W_z q + X_z s)                                         (5)
//   r  = 1 - sigmoid(U_r s (w . q))        "similarity" (gap 1)                 (6)
//   r  = 1 - sigmoid(s (U_r . q))          "literal"
//   s~ = sigmoid(W_h w + U_h (r (.) s))                                         (7)
//   s' = z (.) s + (1 - z) (.) s~                                               (8)
Var strength_step(Tape& tape, const Params& p, const Settings& set, Var w, Var q, Var s) {
  const int64_t b = w.shape()[0], v = w.shape()[1], d = w.shape()[2];
  const Var xz = tape.param(*p.x_z), ur = tape.param(*p.u_r), uh = tape.param(*p.u_h);
  // Per-entity projections of w: [B, V, 1] -> [B, V].
  const Var wz = reshape(matmul(w, tape.param(*p.u_z)), Shape{b, v});
  const Var wh = reshape(matmul(w, tape.param(*p.w_h)), Shape{b, v});
  const Var qz = matmul(q, tape.param(*p.w_z));  // [B, 1]
  const Var z = sigmoid(add(add(wz, qz), mul(s, xz)));
  Var gate;
  if (set.literal_gate) {
    gate = mul(s, matmul(q, ur));  // ur [d, 1]: [B, 1]
  } else {
    const Var sim = reshape(bmm(w, reshape(q, Shape{b, d, 1})), Shape{b, v});
    gate = mul(mul(s, sim), ur);
  }
  const Var r = scale_shift(sigmoid(gate), -1.0, 1.0);
  const Var cand = sigmoid(add(wh, mul(mul(r, s), uh)));
  return add(cand, mul(z, sub(s, cand)));  // z s + (1 - z) s~
}

}  // namespace memgrad::qa::amn
