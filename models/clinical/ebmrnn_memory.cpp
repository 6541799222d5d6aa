// EBmRNN's explicit and blurred memories (see ebmrnn_memory.hpp). Equation numbers are the
// paper's Appendix A.1.
#include "models/clinical/ebmrnn_memory.hpp"

#include "engine/error.hpp"
#include "models/dnc/dnc_memory.hpp"
#include "ops/ops.hpp"

namespace memgrad::ebm {
namespace {

std::string shape_of(Var v) { return v.defined() ? v.shape().str() : std::string("undefined"); }

void expect_rank(const char* fn, const char* what, Var v, int rank) {
  MG_CHECK(v.defined() && v.shape().rank == rank, "ebm::", fn, ": ", what, " must have rank ", rank,
           ", got ", shape_of(v));
}

// x [B, D] -> [B, 1, D]: one key (or one row) for a content lookup.
Var as_row(Var x) { return reshape(x, Shape{x.dim(0), 1, x.dim(1)}); }

// S(k, M) = cosine of every key with every row: keys [B, R, D], memory [B, N, D] -> [B, R, N],
// as ops/nn.hpp's cosine_similarity computes it, with M's unit rows given when known.
Var cosine(Var keys, Var memory, Var unit) {
  if (!unit.defined()) return cosine_similarity(keys, memory, kEpsilon);
  return bmm(normalize(keys, kEpsilon), unit, false, true);
}

// S(key, M) for one key per sample: key [B, D], memory [B, N, D] -> [B, N].
Var similarity(Var key, Var memory, Var unit) {
  Var s = cosine(as_row(key), memory, unit);  // [B, 1, N]
  return reshape(s, Shape{memory.dim(0), memory.dim(1)});
}

// Eq. 7 and Eq. 13 are one gated mix of two inputs a, b [..., D] (the gate over their
// concatenation, scalar or per dimension as W_g's width says):
//   g = sigma([a ; b] W_g + b_g),  out = ReLU((1 - g) a W_a + g b W_b + bias).
struct Mix {
  Var gate, out;
};
Mix gated_mix(const char* fn, Var a, Var b, Var w_g, Var b_g, Var w_a, Var w_b, Var bias) {
  MG_CHECK(b.defined() && b.shape() == a.shape(), "ebm::", fn, ": ", shape_of(b), " must match ",
           shape_of(a));
  const int axis = a.shape().rank - 1;
  Temporaries temps(*a.tape);  // the products and sums die once out is made
  Mix m;
  m.gate = temps.keep(sigmoid(addmm(b_g, concat({a, b}, axis), w_g)));
  Var mixed = add(mul_complement(m.gate, matmul(a, w_a)), mul(m.gate, matmul(b, w_b)));
  m.out = temps.keep(relu(add(mixed, bias)));
  return m;
}

}  // namespace

// one_hot(argmax(logits + g)) with g ~ Gumbel (straight-through), or one_hot(argmax(logits)).
Var hard_choice(Var logits, const Choice& choice) {
  if (choice.noise) {
    if (choice.scale != 1.0) logits = scale(logits, choice.scale);
    return gumbel_softmax(logits, choice.temperature, /*hard=*/true, choice.mode);
  }
  Tape& tape = *logits.tape;
  Var out = tape.constant(logits.shape(), logits.dtype(), 0.0);
  const Tensor& x = logits.value();
  Tensor& y = tape.value(out.id);
  const int64_t n = logits.shape()[-1], rows = x.numel() / n;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t best = 0;
    for (int64_t i = 1; i < n; ++i)
      if (x.at(r * n + i) > x.at(r * n + best)) best = i;
    y.set(r * n + best, 1.0);
  }
  return out;
}

// w^{r,E} = GumbelSoftmax_hard(S(k^E, E_{t-1})),  r^E = w^{r,E} E_{t-1}      (5), (6)
Read explicit_read(Var memory, Var keys, const Choice& choice, Var unit) {
  expect_rank("explicit_read", "memory", memory, 3);
  expect_rank("explicit_read", "keys", keys, 3);
  Temporaries temps(*memory.tape);  // the similarities die once the choice is made
  Var w = temps.keep(hard_choice(cosine(keys, memory, unit), choice));  // [B, R, f]
  return {w, temps.keep(bmm(w, memory))};
}

// w^{r,B} = softmax(S(k^B, B_{t-1})),  r^B = w^{r,B} B_{t-1}                  (5), (6)
Read blurred_read(Var memory, Var keys, Var unit) {
  expect_rank("blurred_read", "memory", memory, 3);
  expect_rank("blurred_read", "keys", keys, 3);
  Temporaries temps(*memory.tape);                          // the similarities die once weighted
  Var w = temps.keep(softmax(cosine(keys, memory, unit)));  // [B, R, N^B]
  return {w, temps.keep(bmm(w, memory))};
}

// u_t = alpha u_{t-1} + (1 - alpha) mean_r w^{r,E}_{t,r}                      (11)
Var usage_update(Var usage, Var read_weights, double alpha, bool stop_gradient) {
  expect_rank("usage_update", "usage", usage, 2);
  expect_rank("usage_update", "read_weights", read_weights, 3);
  MG_CHECK(read_weights.dim(0) == usage.dim(0) && read_weights.dim(2) == usage.dim(1),
           "ebm::usage_update: read_weights ", shape_of(read_weights), " do not fit usage ",
           shape_of(usage));
  Var w = mean_axis(read_weights, 1);  // [B, f]
  if (stop_gradient) w = detach(w);
  return add(scale(usage, alpha), scale(w, 1 - alpha));
}

// E_t = [E_{t-1}; m_t]                                                        (9)
Var append(Var memory, Var candidate) {
  expect_rank("append", "candidate", candidate, 2);
  if (memory.defined()) return concat({memory, as_row(candidate)}, 1);
  // The first slot as a copy, not a reshape view of m_0: a view read many steps later, while m_0
  // has other consumers in between, would let a moving-gradient tape (Tape::set_move_grads) sum
  // m_0's gradient in another order than a plain tape (the training modes' bit-for-bit test).
  return stack({candidate}, 1);
}

// u_t = [u_t; 0]: a new slot has not been read.
Var append_usage(Var usage, Var like_candidate) {
  Tape& tape = *like_candidate.tape;
  Var zero = tape.constant(Shape{like_candidate.dim(0), 1}, like_candidate.dtype(), 0.0);
  return usage.defined() ? concat({usage, zero}, 1) : zero;
}

// w~ = softmax(1 - S(m_t, E_{t-1}))                                           (10)
// w^{w,E} = GumbelSoftmax_hard(1 - (w~ + gamma_t u_t))                        (11)
// m^_t = E_{t-1}^T w^{w,E};  E_t = E_{t-1} o (1 - w^{w,E} 1^T) + w^{w,E} m_t^T   (12)
// u_t[j] = 0 for the replaced slot j:  u_t o (1 - w^{w,E})
Eviction evict_and_write(Var memory, Var usage, Var candidate, Var gamma, const Choice& choice,
                         Var unit) {
  expect_rank("evict_and_write", "memory", memory, 3);
  const int64_t B = memory.dim(0), N = memory.dim(1), D = memory.dim(2);
  MG_CHECK(usage.defined() && usage.shape() == (Shape{B, N}), "ebm::evict_and_write: usage ",
           shape_of(usage), " does not fit memory ", shape_of(memory));
  MG_CHECK(candidate.defined() && candidate.shape() == (Shape{B, D}),
           "ebm::evict_and_write: candidate ", shape_of(candidate), " does not fit memory ",
           shape_of(memory));
  MG_CHECK(gamma.defined() && gamma.shape() == (Shape{B, 1}), "ebm::evict_and_write: gamma ",
           shape_of(gamma), " must be [", B, ",1]");
  Temporaries temps(*memory.tape);  // the scores and reshapes die once the slot is chosen
  Eviction ev;
  ev.retention = temps.keep(softmax(scale_shift(similarity(candidate, memory, unit), -1, 1)));
  ev.weights =
      temps.keep(hard_choice(scale_shift(add(ev.retention, mul(gamma, usage)), -1, 1), choice));
  ev.popped = temps.keep(reshape(bmm(reshape(ev.weights, Shape{B, 1, N}), memory), Shape{B, D}));
  Var whole = memory.tape->constant(Shape{B, D}, memory.dtype(), 1.0);  // erase every dim
  ev.memory = temps.keep(dnc::erase_and_write(memory, ev.weights, whole, candidate));
  ev.usage = temps.keep(mul_complement(ev.weights, usage));
  return ev;
}

// f_t = sigma(W_f^i m_t + W_f^E m^_t + b_f)
// m^B_t = ReLU((1 - f_t) W_i m_t + f_t W_E m^_t + b_m)                        (13)
Var blurred_candidate(Var candidate, Var popped, const MixWeights& w) {
  expect_rank("blurred_candidate", "candidate", candidate, 2);
  return gated_mix("blurred_candidate", candidate, popped, w.w_f, w.b_f, w.w_i, w.w_e, w.b_m).out;
}

// w^{w,B} = softmax(+-S(m^B_t, B_{t-1}))
// B_t = B_{t-1} o (1 - w^{w,B} e_t^T) + w^{w,B} m^B_t^T                        (14)
BlurredWrite blurred_write(Var memory, Var blurred_candidate, Var erase, bool similar, Var unit) {
  expect_rank("blurred_write", "memory", memory, 3);
  Temporaries temps(*memory.tape);  // the similarities die once weighted
  Var s = similarity(blurred_candidate, memory, unit);
  BlurredWrite out;
  out.weights = temps.keep(softmax(similar ? s : neg(s)));
  out.memory = temps.keep(dnc::erase_and_write(memory, out.weights, erase, blurred_candidate));
  return out;
}

// g_t = sigma(a_g^B . r^B + a_g^E . r^E + b_g)
// r_t = ReLU((1 - g_t) W_r^B r^B + g_t W_r^E r^E + b_r)                       (7)
Fused fuse_reads(Var blurred, Var explicit_read, const GateWeights& w) {
  expect_rank("fuse_reads", "blurred", blurred, 3);
  const Mix mix =
      gated_mix("fuse_reads", blurred, explicit_read, w.a_g, w.b_g, w.w_rb, w.w_re, w.b_r);
  return {mix.gate, mix.out};
}

}  // namespace memgrad::ebm
