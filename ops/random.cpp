// Stochastic ops: dropout, gumbel_softmax, bernoulli_st. Each calls tape.noise_stream() exactly
// once per call and draws one number per element in row-major order, so its noise depends only on
// (seed, step, index of the stochastic op in the step), never on thread count or on other ops.
#include "ops/random.hpp"

#include <algorithm>
#include <cmath>

#include "engine/gradcheck.hpp"

namespace memgrad {
namespace {

MG_OP_READS(dropout, kReadsNothing);
MG_OP_READS(gumbel_softmax, kReadsNothing);
MG_OP_READS(bernoulli_st, kReadsNothing);

// ---------------------------------------------------------------- dropout
// The saved slot holds the mask in x's dtype: 0 for dropped elements, 1 / (1 - p) for kept ones.
void dropout_backward(Tape& tape, NodeId id) {
  const NodeId ix = tape.input_id(id, 0);
  if (!tape.requires_grad(ix)) return;
  MG_DISPATCH(tape.value(id).dtype(), T, {
    const T *mask = tape.saved(id).data<T>(), *g = tape.grad(id).data<T>();
    T* gx = tape.grad(ix).data<T>();
    for (int64_t i = 0; i < tape.value(id).numel(); ++i) gx[i] += g[i] * mask[i];
  });
}

// ---------------------------------------------------------------- gumbel_softmax
// u is clamped to [kUClamp, 1 - kUClamp], so the Gumbel noise stays in about [-3.1, 23].
constexpr double kUClamp = 1e-10;

// The saved slot is [2, numel] in the logits' dtype: row 0 the Gumbel noise g, row 1 y_soft (the
// output itself in soft mode, the surrogate behind the one-hot in hard mode). ints = {rows, n},
// reals = {temperature}. With y = softmax(z / tau), z = logits + g:
//   dL/dlogits_k = (1 / tau) * y_k * (dL/dy_k - sum_j dL/dy_j * y_j).
// This backward never looks at hard or the mode: the straight-through gradient is y_soft's.
void gumbel_softmax_backward(Tape& tape, NodeId id) {
  const NodeId il = tape.input_id(id, 0);
  if (!tape.requires_grad(il)) return;
  const Node& nd = tape.node(id);
  const int64_t rows = nd.ints[0], n = nd.ints[1];
  const double tau = nd.reals[0];
  MG_DISPATCH(tape.value(id).dtype(), T, {
    const T* ysoft = tape.saved(id).data<T>() + rows * n;
    const T* g = tape.grad(id).data<T>();
    T* gl = tape.grad(il).data<T>();
    const T inv_tau = T(1.0 / tau);
    for (int64_t r = 0; r < rows; ++r) {
      const T *y = ysoft + r * n, *gr = g + r * n;
      T dot = T(0);
      for (int64_t k = 0; k < n; ++k) dot += gr[k] * y[k];
      for (int64_t k = 0; k < n; ++k) gl[r * n + k] += inv_tau * y[k] * (gr[k] - dot);
    }
  });
}

// ---------------------------------------------------------------- bernoulli_st
// The saved slot holds the uniform noise u (float64, exact); z = [u < p]. Backward: identity.
void bernoulli_st_backward(Tape& tape, NodeId id) {
  const NodeId ip = tape.input_id(id, 0);
  if (!tape.requires_grad(ip)) return;
  MG_DISPATCH(tape.value(id).dtype(), T, {
    const T* g = tape.grad(id).data<T>();
    T* gp = tape.grad(ip).data<T>();
    for (int64_t i = 0; i < tape.value(id).numel(); ++i) gp[i] += g[i];
  });
}

}  // namespace

Var dropout(Var x, double p, bool training) {
  MG_CHECK(x.defined(), "dropout: undefined input");
  MG_CHECK(p >= 0.0 && p < 1.0, "dropout: p = ", p, " is not in [0, 1) (input of shape ", x.shape(),
           ")");
  if (!training || p == 0.0) return x;
  Tape& tape = *x.tape;
  Var y = tape.record(kOp_dropout, x.shape(), x.dtype(), {x}, dropout_backward);
  tape.node(y.id).reals = {p, 0.0};
  Rng rng = tape.noise_stream();
  Tensor& mask = tape.make_saved(y.id, x.shape(), x.dtype());
  MG_DISPATCH(x.dtype(), T, {
    const T keep_scale = T(1.0 / (1.0 - p));
    const T* px = x.value().data<T>();
    T* pm = mask.data<T>();
    T* py = tape.value(y.id).data<T>();
    for (int64_t i = 0; i < x.value().numel(); ++i) {
      pm[i] = rng.uniform() >= p ? keep_scale : T(0);
      py[i] = px[i] * pm[i];
    }
  });
  return y;
}

Var gumbel_softmax(Var logits, double temperature, bool hard, StraightThrough mode) {
  MG_CHECK(logits.defined(), "gumbel_softmax: undefined input");
  const Shape& s = logits.shape();
  MG_CHECK(s.rank >= 1 && s[-1] > 0, "gumbel_softmax: logits of shape ", s,
           " need a non-empty last axis");
  MG_CHECK(temperature > 0.0 && std::isfinite(temperature), "gumbel_softmax: temperature ",
           temperature, " must be > 0 (logits of shape ", s, ")");
  const int64_t n = s[-1], rows = s.numel() / n;
  const bool one_hot = hard && mode != StraightThrough::surrogate;
  Tape& tape = *logits.tape;
  Var y = tape.record(kOp_gumbel_softmax, s, logits.dtype(), {logits}, gumbel_softmax_backward);
  tape.node(y.id).ints = {rows, n, hard ? 1 : 0, int64_t(mode)};
  tape.node(y.id).reals = {temperature, 0.0};
  Rng rng = tape.noise_stream();
  Tensor& saved = tape.make_saved(y.id, Shape{2, s.numel()}, logits.dtype());
  MG_DISPATCH(logits.dtype(), T, {
    const T* pl = logits.value().data<T>();
    T* noise = saved.data<T>();
    T* ysoft = noise + rows * n;
    T* py = tape.value(y.id).data<T>();
    for (int64_t i = 0; i < rows * n; ++i) {
      if (mode == StraightThrough::most_likely) {
        noise[i] = T(0);
        continue;
      }
      const double u = std::clamp(rng.uniform(), kUClamp, 1.0 - kUClamp);
      noise[i] = T(-std::log(-std::log(u)));
    }
    const T inv_tau = T(1.0 / temperature);
    for (int64_t r = 0; r < rows; ++r) {
      const T *l = pl + r * n, *g = noise + r * n;
      T* ys = ysoft + r * n;
      T mx = (l[0] + g[0]) * inv_tau;
      for (int64_t k = 1; k < n; ++k) mx = std::max(mx, (l[k] + g[k]) * inv_tau);
      T sum = T(0);
      for (int64_t k = 0; k < n; ++k) sum += ys[k] = std::exp((l[k] + g[k]) * inv_tau - mx);
      int64_t best = 0;
      for (int64_t k = 0; k < n; ++k) {
        ys[k] /= sum;
        if (ys[k] > ys[best]) best = k;
      }
      T* out = py + r * n;
      for (int64_t k = 0; k < n; ++k) out[k] = one_hot ? T(k == best ? 1 : 0) : ys[k];
    }
  });
  return y;
}

Var bernoulli_st(Var probs, StraightThrough mode) {
  MG_CHECK(probs.defined(), "bernoulli_st: undefined input");
  MG_DISPATCH(probs.dtype(), T, {
    const T* pp = probs.value().data<T>();
    for (int64_t i = 0; i < probs.value().numel(); ++i)
      MG_CHECK(pp[i] >= T(0) && pp[i] <= T(1), "bernoulli_st: probability ", pp[i], " at position ",
               i, " of probs ", probs.shape(), " is not in [0, 1]");
  });
  Tape& tape = *probs.tape;
  Var z =
      tape.record(kOp_bernoulli_st, probs.shape(), probs.dtype(), {probs}, bernoulli_st_backward);
  tape.node(z.id).ints = {int64_t(mode), 0, 0, 0};
  Rng rng = tape.noise_stream();
  double* u = tape.make_saved(z.id, probs.shape(), DType::f64).data<double>();
  MG_DISPATCH(probs.dtype(), T, {
    const T* pp = probs.value().data<T>();
    T* pz = tape.value(z.id).data<T>();
    for (int64_t i = 0; i < probs.value().numel(); ++i) {
      u[i] = mode == StraightThrough::most_likely ? 0.5 : rng.uniform();
      pz[i] = mode == StraightThrough::surrogate ? pp[i] : T(u[i] < double(pp[i]) ? 1 : 0);
    }
  });
  return z;
}

}  // namespace memgrad

// ---------------------------------------------------------------- gradient-check cases
namespace memgrad {
namespace {

const bool kRandomCases = [] {
  // dropout in training mode: the checker rebuilds on a tape with the same seed and step, so every
  // evaluation replays the same mask.
  for (const auto& [label, s, p] :
       {std::tuple{"p0.3", Shape{3, 5}, 0.3}, std::tuple{"batch1-p0.3", Shape{1, 8}, 0.3},
        std::tuple{"rank3-p0.3", Shape{2, 3, 4}, 0.3}, std::tuple{"p0.6", Shape{4, 6}, 0.6}}) {
    register_grad_case(
        {.op = "dropout",
         .name = std::string("dropout/") + label,
         .make_inputs = [s](Rng& r) { return std::vector<GradInput>{{random_tensor(r, s)}}; },
         .build = [p](Tape&, std::span<const Var> v) { return dropout(v[0], p, true); },
         .note = "training mode; the noise is replayed (same seed and step)"});
  }

  // gumbel_softmax soft: the forward is y_soft itself.
  for (const auto& [label, s, tau] : {std::tuple{"soft-tau0.7", Shape{3, 5}, 0.7},
                                      std::tuple{"soft-batch1-tau1.5", Shape{1, 4}, 1.5},
                                      std::tuple{"soft-rank3-tau1", Shape{2, 2, 3}, 1.0}}) {
    register_grad_case(
        {.op = "gumbel_softmax",
         .name = std::string("gumbel_softmax/") + label,
         .make_inputs =
             [s](Rng& r) { return std::vector<GradInput>{{random_tensor(r, s, -2, 2)}}; },
         .build = [tau](Tape&, std::span<const Var> v) { return gumbel_softmax(v[0], tau, false); },
         .note = "noise replayed (same seed and step)"});
  }
  // gumbel_softmax hard: checked in surrogate mode against its declared surrogate y_soft.
  for (const auto& [label, s, tau] : {std::tuple{"hard-tau0.5", Shape{3, 5}, 0.5},
                                      std::tuple{"hard-batch1-tau1", Shape{1, 6}, 1.0},
                                      std::tuple{"hard-rank3-tau2", Shape{2, 2, 3}, 2.0}}) {
    register_grad_case(
        {.op = "gumbel_softmax",
         .name = std::string("gumbel_softmax/") + label,
         .make_inputs =
             [s](Rng& r) { return std::vector<GradInput>{{random_tensor(r, s, -2, 2)}}; },
         .build =
             [tau](Tape&, std::span<const Var> v) {
               return gumbel_softmax(v[0], tau, true, StraightThrough::surrogate);
             },
         .note = "straight-through: surrogate mode (forward = y_soft, same "
                 "backward as sample mode); noise replayed"});
  }
  // bernoulli_st: checked in surrogate mode (forward = p) against the identity backward.
  for (const Shape& s : {Shape{3, 4}, Shape{1, 5}, Shape{2, 2, 3}}) {
    register_grad_case(
        {.op = "bernoulli_st",
         .name = "bernoulli_st/" + s.str(),
         .make_inputs =
             [s](Rng& r) { return std::vector<GradInput>{{random_tensor(r, s, 0.05, 0.95)}}; },
         .build =
             [](Tape&, std::span<const Var> v) {
               return bernoulli_st(v[0], StraightThrough::surrogate);
             },
         .note = "straight-through: surrogate mode (forward = p, identity "
                 "backward as in sample mode); p in [0.05, 0.95)"});
  }
  return true;
}();

}  // namespace
}  // namespace memgrad
