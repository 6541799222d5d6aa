// The AMN's adaptive memory module (§4.2, Eqs. 9-15): the bank controller's decisions, bank
// creation, moves, adding/updating entities and propagation; see models/qa/amn.hpp.
#include "models/qa/amn_steps.hpp"
#include "ops/ops.hpp"

namespace memgrad::qa::amn {
namespace {

// [B, n] ones or zeros.
Var filled(Tape& tape, int64_t b, int64_t n, DType dtype, double value) {
  return tape.constant(Shape{b, n}, dtype, value);
}

}  // namespace

// M = [m_0; m_1 .. m_{L-1}]: m_0 = every entity seen so far (seen [B, V, 1]); with migrate an
// entity is in one bank only, so m_0 = seen - sum_k m_k (k >= 1).
Var all_banks(Var seen, Var upper, bool migrate) {
  const int64_t b = upper.shape()[0], v = upper.shape()[2];
  Var m0 = reshape(seen, Shape{b, 1, v});
  if (migrate) m0 = sub(m0, sum_axis(upper, 1, true));
  return concat({m0, upper}, 1);
}

// p = q(*) (9),  H = Bernoulli(p) (10): bernoulli_st's sample with the straight-through gradient,
// or detached ("loss_only": p learns from its own loss only).
Var decide(Var p, const Settings& set) {
  const Var h = bernoulli_st(p, set.mode);
  return set.straight_through ? h : detach(h);
}

// Pi_au (13): a new entity e takes D[id] (it enters m_0); an entity of the sentence already in
// memory is updated in every bank holding it (one state per entity):  w <- GRU(w_N, w).
// au_input_t [B, 1, 3d] is w_N's projected input of sentence t, fresh_t / again_t [B, V, 1].
// Only the sentence's entities change, so the GRU runs on J rows a sample, not V: pick_t
// [B, V, J] gathers them (rows = pick^T w) and puts the updates back (pick upd); a product with
// 0/1 entries, so the states are those of a GRU over all V rows.
Var add_update(Tape& tape, const GruCell& au, Var w, Var dict, Var au_input_t, Var fresh_t,
               Var again_t, Var pick_t) {
  const int64_t b = w.shape()[0], d = w.shape()[2], j = pick_t.shape()[2];
  w = where(fresh_t, dict, w);
  const Var rows = bmm(pick_t, w, true);  // [B, J, d]
  const Var x = add(tape.constant(Shape{b, j, 3 * d}, w.dtype(), 0.0), au_input_t);
  const Var upd =
      au.step_projected(tape, reshape(x, Shape{b * j, 3 * d}), reshape(rows, Shape{b * j, d}));
  return where(again_t, bmm(pick_t, reshape(upd, Shape{b, j, d})), w);
}

// Pi_prop: a = (A^r)^T [w_0 .. w_V] (14), here a_i = sum_k prop_t[i, k] w_k (prop_t [B, V, V]
// holds the r-hop in-neighbours with the recency weight, normalised: gaps 5-6);
// w <- GRU(a, w) (15) for the entities with an in-neighbour (heard_t [B, V, 1]).
Var propagate(Tape& tape, const GruCell& prop, Var w, Var prop_t, Var heard_t) {
  const int64_t b = w.shape()[0], v = w.shape()[1], d = w.shape()[2];
  const Var a = bmm(prop_t, w);
  const Var upd = prop.step(tape, reshape(a, Shape{b * v, d}), reshape(w, Shape{b * v, d}));
  return where(heard_t, reshape(upd, Shape{b, v, d}), w);
}

// Pi_new (11): only for the last bank m_l (last = exists_l (1 - exists_{l+1}), [B, L]):
//   p_new = sigmoid([m_l (.) w]_{V d} . new.w + new.b)        (gap 3: states laid out by word id)
Creation creation_prob(Tape& tape, const Params& p, Var banks_all, Var exists, Var w) {
  const int64_t b = w.shape()[0], v = w.shape()[1], d = w.shape()[2];
  const int64_t l = banks_all.shape()[1];
  const DType dt = w.dtype();
  const Var ex_all = concat({filled(tape, b, 1, dt, 1.0), exists}, 1);  // m_0 always exists
  const Var ex_next = concat({exists, filled(tape, b, 1, dt, 0.0)}, 1);
  const Var last = mul_complement(ex_next, ex_all);
  const Var members = reshape(bmm(reshape(last, Shape{b, 1, l}), banks_all), Shape{b, v, 1});
  const Var x = reshape(mul(w, members), Shape{b, v * d});
  return {sigmoid(addmm(tape.param(*p.new_b), x, tape.param(*p.new_w))), last};
}

// M.new() when H_new = 1: the bank after the last one starts to exist (none after m_{L-1}).
Banks create_bank(const Banks& banks, Var last, Var h_new, Var live_t) {
  const int64_t l1 = banks.exists.shape()[1];
  const Var created = mul(slice(last, 1, 0, l1), h_new);  // bank k+1 created if k was last
  const Var ex = add(banks.exists, mul_complement(banks.exists, created));
  return {banks.upper, where(live_t, ex, banks.exists)};
}

// Pi_move (12): p_i = q(s_i * w_i); "linear" (gap 2): q(x) = sigmoid(v . x + b); "strength":
// p_i = s_i.
Var move_prob(Tape& tape, const Params& p, const Settings& set, Var w, Var s) {
  if (set.move_by_strength) return s;
  const int64_t b = w.shape()[0], v = w.shape()[1];
  const Var sw = mul(w, reshape(s, Shape{b, v, 1}));
  return sigmoid(
      add(reshape(matmul(sw, tape.param(*p.move_v)), Shape{b, v}), tape.param(*p.move_b)));
}

// m_{k+1}.add(i) for every i in m_k with H_i = 1, when m_{k+1} exists (set semantics: adding an
// entity twice keeps one):  moved_k = m_k H exists_{k+1},
//   copy (the default):      m_{k+1} <- m_{k+1} + (1 - m_{k+1}) moved_k
//   migrate (gap 15):        m_{k+1} <- m_{k+1} - moved_{k+1} + moved_k   (i leaves m_k; the top
//                            bank keeps its entities; m_0 follows from all_banks)
Banks move_entities(Tape& tape, const Banks& banks, Var banks_all, Var h_move, Var live_t,
                    bool migrate) {
  const int64_t b = banks.upper.shape()[0], l1 = banks.upper.shape()[1];
  const int64_t v = banks.upper.shape()[2];
  const Var below = slice(banks_all, 1, 0, l1);  // m_0 .. m_{L-2}
  const Var moved =
      mul(mul(below, reshape(h_move, Shape{b, 1, v})), reshape(banks.exists, Shape{b, l1, 1}));
  Var up;
  if (!migrate) {
    up = add(banks.upper, mul_complement(banks.upper, moved));
  } else {
    const Var top = tape.constant(Shape{b, 1, v}, banks.upper.dtype(), 0.0);  // m_{L-1} stays
    const Var leave = l1 > 1 ? concat({slice(moved, 1, 1, l1 - 1), top}, 1) : top;
    up = add(sub(banks.upper, leave), moved);
  }
  return {where(reshape(live_t, Shape{b, 1, 1}), up, banks.upper), banks.exists};
}

// m_{i+1} <- Pi_move(m_i, n_{m_i}) (Algorithm 1, line 10, read as an assignment): every sentence
// each upper bank is drawn again from the bank below, with its own decisions H_k [B, V]:
//   m_{k+1} = m_k H_k exists_{k+1},   m_0 = seen
// so an entity stays in m_k only while k successive draws keep it there (P = p^k).
Banks filter_banks(const Banks& banks, Var seen, Var h_move, Var live_t, std::vector<Var>& rows) {
  const int64_t b = banks.upper.shape()[0], l1 = banks.upper.shape()[1];
  const int64_t v = banks.upper.shape()[2];
  rows.clear();
  Var below = reshape(seen, Shape{b, 1, v});
  for (int64_t k = 0; k < l1; ++k) {
    below = mul(mul(below, slice(h_move, 1, k, 1)),
                reshape(slice(banks.exists, 1, k, 1), Shape{b, 1, 1}));
    rows.push_back(below);
  }
  return {where(reshape(live_t, Shape{b, 1, 1}), concat(rows, 1), banks.upper), banks.exists};
}

}  // namespace memgrad::qa::amn
