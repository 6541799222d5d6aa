// The grounded GRU cell with semi-diagonal updates (Vani, Jernite & Sontag 2017, "Grounded
// Recurrent Neural Networks", section 3 and Fig. 2). The state h = [g ; c] holds one grounded
// dimension g_l per label (the belief that label l is present, in [-1, 1]) and D_c control
// dimensions c.
//
// Sources: our text copy of the paper lost Eqs. 2-6; the GRU form is the paper's text (Z, R, W
// are D_h x (D_e + D_h), "semi-diagonal") and the block structure, bias initialisation and gate
// convention are those of the first author's reference code (reference-notes section 6,
// model/groundedrnn.py). With x_t the input, gates r (reset) and u (update, the paper's z):
//     v_g = d_M * g' + M_g [c' ; x_t] + b_M_g          (label rows: a diagonal d_M on g)
//     v_c = M_c [c' ; x_t] + B_M^T g' + b_M_c          (control rows: see all of g through B_M)
//   for M in {R, U} with (g', c') = (g_{t-1}, c_{t-1}), and for the candidate W with
//   (g', c') = (r_g * g_{t-1}, r_c * c_{t-1});  r = sigmoid(v^R), u = sigmoid(v^U),
//     h~ = tanh(v^W),  h_t = u * h_{t-1} + (1 - u) * h~          (u = 1 keeps the state).
// Initialisation (reference code): d = 0; M Glorot over the fused [c ; x] -> 3(L + D_c) matrix;
// B Glorot; b = 1 for r and u, 0 for the candidate.
//
// Label unit l is updated from g_{l,t-1}, x_t, c_{t-1} and the control units' reset gates r_c
// (which read all of g through B_R): the paper's "based solely on its previous state, the current
// input and control state c". So with c_{t-1} = 0 the label block of dg_t / dg_{t-1} is diagonal
// (tests/models/test_grnn.cpp). Cost per step and parameters grow linearly in |L|.
//
// Parameters under `prefix`: "W_x" [in, 3G] (G = L + D_c; column blocks r, u, candidate, each
// labels then control), "W_c" [D_c, 2G] (control -> r, u), "W_cn" [D_c, G] (reset control ->
// candidate), "d" [3L] (diagonals of r, u, candidate), "B" [L, 3 D_c] (labels -> control units of
// r, u, candidate), "b" [3G].
#pragma once
#include <cstdint>
#include <string>

#include "engine/parameter.hpp"
#include "engine/rng.hpp"
#include "engine/tape.hpp"

namespace memgrad::text {

struct GroundedState {
  Var g;  // [B, L] grounded dimensions
  Var c;  // [B, D_c] control dimensions
};

class GroundedGruCell {
 public:
  GroundedGruCell(ParameterSet& params, const std::string& prefix, int64_t input_size,
                  int64_t labels, int64_t control, Rng& rng);

  int64_t input_size() const { return input_; }
  int64_t labels() const { return labels_; }
  int64_t control() const { return control_; }

  GroundedState zero_state(Tape& tape, int64_t batch, DType dtype) const;
  // x W_x + b for any leading dims: [..., in] -> [..., 3G].
  Var project_inputs(Var xs) const;
  // One step from the projected input xw_t [B, 3G].
  GroundedState step_projected(Tape& tape, Var xw_t, const GroundedState& prev) const;

 private:
  std::string prefix_;
  int64_t input_, labels_, control_;
  Parameter *w_x_, *w_c_, *w_cn_, *d_, *b_mat_, *b_;
};

}  // namespace memgrad::text
