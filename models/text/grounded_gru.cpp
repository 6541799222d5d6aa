// Grounded GRU cell (see grounded_gru.hpp).
#include "models/text/grounded_gru.hpp"

#include <cmath>

#include "engine/error.hpp"
#include "ops/ops.hpp"

namespace memgrad::text {

GroundedGruCell::GroundedGruCell(ParameterSet& params, const std::string& prefix,
                                 int64_t input_size, int64_t labels, int64_t control, Rng& rng)
    : prefix_(prefix), input_(input_size), labels_(labels), control_(control) {
  MG_CHECK(input_size > 0 && labels > 0 && control > 0, "GroundedGruCell '", prefix,
           "': input size ", input_size, ", labels ", labels, " and control size ", control,
           " must be positive");
  const int64_t L = labels, H = control, G = L + H;
  // Glorot over the fused [c ; x] -> [r u h~] matrix, as the reference code's xavier init.
  const double limit = std::sqrt(6.0 / double(input_size + H + 3 * G));
  w_x_ = &params.add_uniform(prefix + ".W_x", Shape{input_size, 3 * G}, -limit, limit, rng);
  w_c_ = &params.add_uniform(prefix + ".W_c", Shape{H, 2 * G}, -limit, limit, rng);
  w_cn_ = &params.add_uniform(prefix + ".W_cn", Shape{H, G}, -limit, limit, rng);
  d_ = &params.add(prefix + ".d", Shape{3 * L});
  b_mat_ = &params.add_glorot(prefix + ".B", Shape{L, 3 * H}, rng);
  b_ = &params.add(prefix + ".b", Shape{3 * G});
  for (int64_t j = 0; j < 2 * G; ++j) b_->value.set(j, 1.0);  // r and u start at sigmoid(1)
}

GroundedState GroundedGruCell::zero_state(Tape& tape, int64_t batch, DType dtype) const {
  return {tape.constant(Shape{batch, labels_}, dtype, 0.0),
          tape.constant(Shape{batch, control_}, dtype, 0.0)};
}

Var GroundedGruCell::project_inputs(Var xs) const {
  MG_CHECK(xs.defined() && xs.shape().rank >= 2 && xs.dim(-1) == input_, "GroundedGruCell '",
           prefix_, "': inputs must be [..., ", input_, "], got ",
           xs.defined() ? xs.shape() : Shape{});
  Tape& tape = *xs.tape;
  return addmm(tape.param(*b_), xs, tape.param(*w_x_));
}

// r, u = sigmoid(xw_ru + c W_c + [d_r g ; g B_r ; d_u g ; g B_u]);
// h~ = tanh(xw_n + (r_c c) W_cn + [d_n g' ; g' B_n]) with g' = r_g g;  h = h~ + u (h - h~).
GroundedState GroundedGruCell::step_projected(Tape& tape, Var xw_t,
                                              const GroundedState& prev) const {
  const int64_t L = labels_, H = control_, G = L + H;
  MG_CHECK(xw_t.shape().rank == 2 && xw_t.dim(1) == 3 * G && prev.g.dim(1) == L &&
               prev.c.dim(1) == H && prev.g.dim(0) == xw_t.dim(0) && prev.c.dim(0) == xw_t.dim(0),
           "GroundedGruCell '", prefix_, "': projected input ", xw_t.shape(), ", g ",
           prev.g.shape(), ", c ", prev.c.shape(), " (want [B, ", 3 * G, "], [B, ", L, "], [B, ", H,
           "])");
  Temporaries temps(tape);  // the gates' pieces die once g and c are cut out of h
  const Var d = tape.param(*d_), bm = tape.param(*b_mat_);
  const Var& g = prev.g;
  const Var& c = prev.c;
  // Labels' share of the gates: diagonal on the label rows, B on the control rows.
  const Var g_b = matmul(g, slice(bm, 1, 0, 2 * H));  // [B, 2H]
  const Var from_g = concat({mul(g, slice(d, 0, 0, L)), slice(g_b, 1, 0, H),
                             mul(g, slice(d, 0, L, L)), slice(g_b, 1, H, H)},
                            1);
  const Var ru =
      sigmoid(add(addmm(slice(xw_t, 1, 0, 2 * G), c, tape.param(*w_c_)), from_g));  // [B, 2G]
  const Var r_g = slice(ru, 1, 0, L), r_c = slice(ru, 1, L, H);
  const Var u = slice(ru, 1, G, G);
  const Var g_reset = mul(r_g, g), c_reset = mul(r_c, c);
  const Var from_g_n =
      concat({mul(g_reset, slice(d, 0, 2 * L, L)), matmul(g_reset, slice(bm, 1, 2 * H, H))}, 1);
  const Var cand =
      tanh(add(addmm(slice(xw_t, 1, 2 * G, G), c_reset, tape.param(*w_cn_)), from_g_n));
  const Var h_prev = concat({g, c}, 1);
  const Var h = add(cand, mul(u, sub(h_prev, cand)));
  return {temps.keep(slice(h, 1, 0, L)), temps.keep(slice(h, 1, L, H))};
}

}  // namespace memgrad::text
