// Elementwise ops. Each rule holds its forward f and its derivatives side by side; backward
// derivatives may use the saved output y, which is cheaper than recomputing (exp, sigmoid, tanh).
#include "ops/elementwise.hpp"

#include <algorithm>
#include <cmath>

#include "engine/gradcheck.hpp"
#include "ops/broadcast.hpp"
#include "ops/vec_math.hpp"

namespace memgrad {
namespace {

MG_OP_READS(add, kReadsNothing);
MG_OP_READS(sub, kReadsNothing);
MG_OP_READS(mul, reads_factors());
MG_OP_READS(mul_complement, reads_factors());
MG_OP_READS(div, reads_inputs({1}, /*output=*/true));
MG_OP_READS(prelu, kReadsInputs);
MG_OP_READS(neg, kReadsNothing);
MG_OP_READS(exp, kReadsOutput);
MG_OP_READS(log, kReadsInputs);
MG_OP_READS(sqrt, kReadsOutput);
MG_OP_READS(pow, kReadsInputs);
MG_OP_READS(sigmoid, kReadsOutput);
MG_OP_READS(tanh, kReadsOutput);
MG_OP_READS(relu, kReadsInputs);
MG_OP_READS(softplus, kReadsInputs);
MG_OP_READS(clamp, kReadsInputs);
MG_OP_READS(scale, kReadsNothing);
MG_OP_READS(add_scalar, kReadsNothing);
MG_OP_READS(scale_shift, kReadsNothing);
MG_OP_READS(where, reads_inputs({0}));

// ---------------------------------------------------------------- binary: z = f(a, b)
// da and db are dz/da and dz/db at one element.
// One line per rule reads as a table, so clang-format leaves these alone.
// clang-format off
struct AddRule {
  template <class T> static T f(T a, T b) { return a + b; }
  template <class T> static T da(T, T, T) { return T(1); }
  template <class T> static T db(T, T, T) { return T(1); }
};
struct SubRule {
  template <class T> static T f(T a, T b) { return a - b; }
  template <class T> static T da(T, T, T) { return T(1); }
  template <class T> static T db(T, T, T) { return T(-1); }
};
struct MulRule {
  template <class T> static T f(T a, T b) { return a * b; }
  template <class T> static T da(T, T b, T) { return b; }
  template <class T> static T db(T a, T, T) { return a; }
};
struct MulComplementRule {  // (1 - a) b
  template <class T> static T f(T a, T b) { return (T(1) - a) * b; }
  template <class T> static T da(T, T b, T) { return -b; }
  template <class T> static T db(T a, T, T) { return T(1) - a; }
};
struct DivRule {
  template <class T> static T f(T a, T b) { return a / b; }
  template <class T> static T da(T, T b, T) { return T(1) / b; }
  template <class T> static T db(T, T b, T z) { return -z / b; }
};
// Branch-free, so that GCC vectorizes both passes: a select (x > 0 ? 1 : s, or a 0/1 factor from a
// comparison) is "control flow in loop" to it, and PReLU's backward over mixed signs ran ~15x
// slower than mul's (EntNet's profile). f is exactly the branchy value (max(x, 0) + s min(x, 0)
// adds an exact 0 to one term); in da the step p = 1/2 + copysign(1/2, x) is 1 for x > 0 and 0
// for x < 0, so da is 1 or s exactly; at x = +0 it takes the right-hand derivative 1 (-0: s).
struct PreluRule {  // a = x, b = slope
  template <class T> static T f(T x, T s) { return std::max(x, T(0)) + s * std::min(x, T(0)); }
  template <class T> static T da(T x, T s, T) {
    const T p = T(0.5) + std::copysign(T(0.5), x);
    return p + (T(1) - p) * s;
  }
  template <class T> static T db(T x, T, T) { return std::min(x, T(0)); }
};
// clang-format on

// Adds g * d(o, i, j) into the gradient gx of one input of a binary op (a when ForB is false, b
// otherwise), where d is the local derivative at output o with input indices i (into a) and j
// (into b). With `overwrite` (the first contribution, and an input as large as the output) it
// stores instead. Along a run where the input is stretched, the run is summed first and added
// once: that is the reduction of a broadcast input back to its shape.
template <bool ForB, class T, class D>
void binary_input_grad(const BroadcastPlan& plan, const T* g, T* gx, bool overwrite, D d) {
  for_each_run(plan, [&](int64_t o, int64_t i, int64_t j, int64_t n, auto sa, auto sb) {
    const int64_t x = ForB ? j : i;
    constexpr int64_t sx = ForB ? decltype(sb)::value : decltype(sa)::value;
    if constexpr (sx == 0) {
      T acc = 0;
      for (int64_t k = 0; k < n; ++k) acc += g[o + k] * d(o + k, i + k * sa, j + k * sb);
      gx[x] += acc;
    } else if (overwrite) {
      for (int64_t k = 0; k < n; ++k) gx[x + k] = g[o + k] * d(o + k, i + k * sa, j + k * sb);
    } else {
      for (int64_t k = 0; k < n; ++k) gx[x + k] += g[o + k] * d(o + k, i + k * sa, j + k * sb);
    }
  });
}

// The gradient buffer of input `in` for a backward that covers all `out_numel` output elements:
// overwritten on its first contribution when the input is not broadcast (each element written
// exactly once), otherwise zeroed on first use and accumulated.
template <class T>
T* input_grad_buffer(Tape& tape, NodeId in, int64_t out_numel, bool& overwrite) {
  if (tape.value(in).numel() == out_numel) return tape.grad_for_write(in, overwrite).data<T>();
  overwrite = false;
  return tape.grad(in).data<T>();
}

template <class Rule>
void binary_backward(Tape& tape, NodeId id) {
  const NodeId ia = tape.input_id(id, 0), ib = tape.input_id(id, 1);
  const Tensor &a = tape.value(ia), &b = tape.value(ib), &z = tape.value(id);
  const BroadcastPlan plan = plan_broadcast(tape.node(id).op->name, a.shape(), b.shape());
  MG_DISPATCH(z.dtype(), T, {
    const T *pa = a.data<T>(), *pb = b.data<T>(), *pz = z.data<T>();
    const T* g = tape.grad(id).data<T>();
    if (ia == ib && tape.requires_grad(ia)) {
      // The same node twice (mul(x, x) in a squared norm): one gradient, g * (da + db).
      bool over = false;
      T* gx = tape.grad_for_write(ia, over).data<T>();
      const int64_t n = z.numel();
      auto d = [&](int64_t k) {
        return g[k] * (Rule::da(pa[k], pb[k], pz[k]) + Rule::db(pa[k], pb[k], pz[k]));
      };
      if (over)
        for (int64_t k = 0; k < n; ++k) gx[k] = d(k);
      else
        for (int64_t k = 0; k < n; ++k) gx[k] += d(k);
      return;
    }
    if constexpr (std::is_same_v<Rule, AddRule>) {
      // a + b passes g on unchanged: one input may take g's buffer itself (Tape::move_grad), once
      // the other has its copy.
      const NodeId mover = tape.requires_grad(ia) ? ia : ib, other = mover == ia ? ib : ia;
      if (plan.same && tape.can_move_grad(id, mover)) {
        if (tape.requires_grad(other)) tape.pass_grad(id, other, /*may_move=*/false);
        tape.move_grad(id, mover);
        return;
      }
    }
    if (plan.same && tape.requires_grad(ia) && tape.requires_grad(ib)) {
      // Same shapes, both gradients wanted: one sweep reads g, a and b once for both.
      bool over_a = false, over_b = false;
      T* ga = tape.grad_for_write(ia, over_a).data<T>();
      T* gb = tape.grad_for_write(ib, over_b).data<T>();
      const int64_t n = z.numel();
      auto sweep = [&](auto store_a, auto store_b) {  // compile-time store (true) or add
        for (int64_t k = 0; k < n; ++k) {
          const T da = g[k] * Rule::da(pa[k], pb[k], pz[k]);
          const T db = g[k] * Rule::db(pa[k], pb[k], pz[k]);
          ga[k] = store_a ? da : ga[k] + da;
          gb[k] = store_b ? db : gb[k] + db;
        }
      };
      using Yes = std::true_type;
      using No = std::false_type;
      if (over_a && over_b)
        sweep(Yes{}, Yes{});
      else if (over_a)
        sweep(Yes{}, No{});
      else if (over_b)
        sweep(No{}, Yes{});
      else
        sweep(No{}, No{});
      return;
    }
    // Otherwise one pass per input that wants a gradient (a broadcast input is reduced here).
    bool overwrite = false;
    if (tape.requires_grad(ia)) {
      T* ga = input_grad_buffer<T>(tape, ia, z.numel(), overwrite);
      binary_input_grad<false>(plan, g, ga, overwrite, [&](int64_t o, int64_t i, int64_t j) {
        return Rule::da(pa[i], pb[j], pz[o]);
      });
    }
    if (tape.requires_grad(ib)) {
      T* gb = input_grad_buffer<T>(tape, ib, z.numel(), overwrite);
      binary_input_grad<true>(plan, g, gb, overwrite, [&](int64_t o, int64_t i, int64_t j) {
        return Rule::db(pa[i], pb[j], pz[o]);
      });
    }
  });
}

template <class Rule>
Var binary(const OpDef& op, Var a, Var b) {
  MG_CHECK(a.tape == b.tape && a.defined(), op.name, ": inputs from different tapes");
  MG_CHECK(a.dtype() == b.dtype(), op.name, ": dtypes differ (", dtype_name(a.dtype()), " vs ",
           dtype_name(b.dtype()), ")");
  const BroadcastPlan plan = plan_broadcast(op.name, a.shape(), b.shape());
  Var z = a.tape->record(op, plan.result, a.dtype(), {a, b}, binary_backward<Rule>);
  MG_DISPATCH(a.dtype(), T, {
    const T *pa = a.value().data<T>(), *pb = b.value().data<T>();
    T* pz = a.tape->value(z.id).data<T>();
    for_each_run(plan, [&](int64_t o, int64_t i, int64_t j, int64_t n, auto sa, auto sb) {
      for (int64_t k = 0; k < n; ++k) pz[o + k] = Rule::f(pa[i + k * sa], pb[j + k * sb]);
    });
  });
  return z;
}

// ---------------------------------------------------------------- unary: y = f(x; p0, p1)
// p0, p1 are the op's scalar arguments (exponent, clamp bounds), saved in the node.
// One line per rule reads as a table, so clang-format leaves these alone.
// clang-format off
struct NegRule {
  template <class T> static T f(T x, double, double) { return -x; }
  template <class T> static T df(T, T, double, double) { return T(-1); }
};
struct ExpRule {
  template <class T> static T f(T x, double, double) { return std::exp(x); }
  template <class T> static T df(T, T y, double, double) { return y; }
};
struct LogRule {
  template <class T> static T f(T x, double, double) { return std::log(x); }
  template <class T> static T df(T x, T, double, double) { return T(1) / x; }
};
struct SqrtRule {
  template <class T> static T f(T x, double, double) { return std::sqrt(x); }
  template <class T> static T df(T, T y, double, double) { return T(0.5) / y; }
};
struct PowRule {
  template <class T> static T f(T x, double p, double) { return std::pow(x, T(p)); }
  template <class T> static T df(T x, T, double p, double) { return T(p) * std::pow(x, T(p - 1)); }
};
struct SigmoidRule {
  static vec::f32v fv(vec::f32v x) { return vec::sigmoid(x); }  // float32, vec::kLanes at once
  template <class T> static T f(T x, double, double) {
    // Two branches keep exp's argument non-positive: no overflow for large |x|.
    if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
    const T e = std::exp(x);
    return e / (T(1) + e);
  }
  template <class T> static T df(T, T y, double, double) { return y * (T(1) - y); }
};
struct TanhRule {
  template <class T> static T f(T x, double, double) { return std::tanh(x); }
  static vec::f32v fv(vec::f32v x) { return vec::tanh(x); }  // float32, vec::kLanes at once
  template <class T> static T df(T, T y, double, double) { return T(1) - y * y; }
};
struct ReluRule {
  template <class T> static T f(T x, double, double) { return x > T(0) ? x : T(0); }
  template <class T> static T df(T x, T, double, double) { return x > T(0) ? T(1) : T(0); }
};
struct SoftplusRule {
  template <class T> static T f(T x, double, double) {
    return std::max(x, T(0)) + std::log1p(std::exp(-std::fabs(x)));
  }
  static vec::f32v fv(vec::f32v x) { return vec::softplus(x); }  // float32, vec::kLanes at once
  template <class T> static T df(T x, T, double, double) { return SigmoidRule::f(x, 0, 0); }
};
struct ClampRule {
  template <class T> static T f(T x, double lo, double hi) {
    return x < T(lo) ? T(lo) : (x > T(hi) ? T(hi) : x);
  }
  template <class T> static T df(T x, T, double lo, double hi) {
    return (x > T(lo) && x < T(hi)) ? T(1) : T(0);
  }
};
struct ScaleRule {
  template <class T> static T f(T x, double c, double) { return T(c) * x; }
  template <class T> static T df(T, T, double c, double) { return T(c); }
};
struct AddScalarRule {
  template <class T> static T f(T x, double c, double) { return x + T(c); }
  template <class T> static T df(T, T, double, double) { return T(1); }
};
struct ScaleShiftRule {
  template <class T> static T f(T x, double a, double b) { return T(a) * x + T(b); }
  template <class T> static T df(T, T, double a, double) { return T(a); }
};
// clang-format on

template <class Rule>
void unary_backward(Tape& tape, NodeId id) {
  const NodeId ix = tape.input_id(id, 0);
  if (!tape.requires_grad(ix)) return;
  // x + c passes g on unchanged (moved or copied: Tape::pass_grad).
  if constexpr (std::is_same_v<Rule, AddScalarRule>) {
    tape.pass_grad(id, ix);
    return;
  }
  const Node& n = tape.node(id);
  const Tensor &x = tape.value(ix), &y = tape.value(id);
  MG_DISPATCH(y.dtype(), T, {
    const T *px = x.data<T>(), *py = y.data<T>(), *g = tape.grad(id).data<T>();
    bool overwrite = false;
    T* gx = tape.grad_for_write(ix, overwrite).data<T>();
    const int64_t count = y.numel();
    const double p0 = n.reals[0], p1 = n.reals[1];
    if (overwrite)
      for (int64_t i = 0; i < count; ++i) gx[i] = g[i] * Rule::df(px[i], py[i], p0, p1);
    else
      for (int64_t i = 0; i < count; ++i) gx[i] += g[i] * Rule::df(px[i], py[i], p0, p1);
  });
}

template <class Rule>
Var unary(const OpDef& op, Var x, double p0 = 0, double p1 = 0) {
  MG_CHECK(x.defined(), op.name, ": undefined input");
  Var y = x.tape->record(op, x.shape(), x.dtype(), {x}, unary_backward<Rule>);
  x.tape->node(y.id).reals = {p0, p1};
  MG_DISPATCH(x.dtype(), T, {
    const T* px = x.value().data<T>();
    T* py = x.tape->value(y.id).data<T>();
    const int64_t count = x.value().numel();
    // Rules with a float32 SIMD version (fv: sigmoid, tanh) use it; see vec_math.hpp.
    if constexpr (sizeof(T) == 4 && requires(vec::f32v v) { Rule::fv(v); })
      vec::map(px, py, count, Rule::fv);
    else
      for (int64_t i = 0; i < count; ++i) py[i] = Rule::f(px[i], p0, p1);
  });
  return y;
}

// ---------------------------------------------------------------- where(mask, a, b)
// Output has a's shape; mask and b broadcast to it. dz/da = [mask], dz/db = [!mask].
void where_backward(Tape& tape, NodeId id) {
  const NodeId im = tape.input_id(id, 0), ia = tape.input_id(id, 1), ib = tape.input_id(id, 2);
  const Tensor &m = tape.value(im), &b = tape.value(ib), &z = tape.value(id);
  const BroadcastPlan pm = plan_broadcast("where", z.shape(), m.shape());
  const bool want_a = tape.requires_grad(ia), want_b = tape.requires_grad(ib);
  MG_DISPATCH(z.dtype(), T, {
    const T *pmask = m.data<T>(), *g = tape.grad(id).data<T>();
    bool over_a = false, over_b = false;
    T* ga = want_a ? tape.grad_for_write(ia, over_a).data<T>() : nullptr;
    if (b.shape() == z.shape()) {
      // The common case (a masked state update): runs along the output with the mask's value
      // constant (sm = 0) or varying (sm = 1); each gradient is written once per element.
      T* gb = want_b ? tape.grad_for_write(ib, over_b).data<T>() : nullptr;
      for_each_run(pm, [&](int64_t o, int64_t, int64_t j, int64_t n, auto, auto sm) {
        if constexpr (decltype(sm)::value == 0) {
          // One mask value for the whole run (a [B, 1, 1] mask over [B, N, W]): the run's
          // gradient goes to one input as a block; the other gets zeros if it is being written.
          // (Zeros first: when a and b are one node, `other` and `to` are one buffer.)
          const bool on = pmask[j] != T(0);
          T* to = on ? ga : gb;
          T* other = on ? gb : ga;
          if (other && (on ? over_b : over_a)) std::fill_n(other + o, n, T(0));
          if (to && (on ? over_a : over_b))
            std::copy_n(g + o, n, to + o);
          else if (to)
            for (int64_t k = 0; k < n; ++k) to[o + k] += g[o + k];
        } else {
          for (int64_t k = 0; k < n; ++k) {
            const bool keep_a = pmask[j + k] != T(0);
            const T to_a = keep_a ? g[o + k] : T(0), to_b = keep_a ? T(0) : g[o + k];
            if (ga) ga[o + k] = over_a ? to_a : ga[o + k] + to_a;
            if (gb) gb[o + k] = over_b ? to_b : gb[o + k] + to_b;
          }
        }
      });
      return;
    }
    // b broadcast too: element by element.
    const BroadcastPlan pb = plan_broadcast("where", z.shape(), b.shape());
    T* gb = want_b ? tape.grad(ib).data<T>() : nullptr;
    for_each_broadcast(pm, [&](int64_t o, int64_t, int64_t j) {
      if (pmask[j] != T(0)) {
        if (ga) ga[o] = over_a ? g[o] : ga[o] + g[o];
      } else {
        if (ga && over_a) ga[o] = T(0);
        if (gb) gb[b_index(pb, o)] += g[o];
      }
    });
  });
}

}  // namespace

Var add(Var a, Var b) { return binary<AddRule>(kOp_add, a, b); }
Var sub(Var a, Var b) { return binary<SubRule>(kOp_sub, a, b); }
Var mul(Var a, Var b) { return binary<MulRule>(kOp_mul, a, b); }
Var div(Var a, Var b) { return binary<DivRule>(kOp_div, a, b); }
Var mul_complement(Var a, Var b) { return binary<MulComplementRule>(kOp_mul_complement, a, b); }
Var prelu(Var x, Var slope) { return binary<PreluRule>(kOp_prelu, x, slope); }

Var neg(Var x) { return unary<NegRule>(kOp_neg, x); }
Var exp(Var x) { return unary<ExpRule>(kOp_exp, x); }
Var log(Var x) { return unary<LogRule>(kOp_log, x); }
Var sqrt(Var x) { return unary<SqrtRule>(kOp_sqrt, x); }
Var pow(Var x, double exponent) { return unary<PowRule>(kOp_pow, x, exponent); }
Var sigmoid(Var x) { return unary<SigmoidRule>(kOp_sigmoid, x); }
Var tanh(Var x) { return unary<TanhRule>(kOp_tanh, x); }
Var relu(Var x) { return unary<ReluRule>(kOp_relu, x); }
Var softplus(Var x) { return unary<SoftplusRule>(kOp_softplus, x); }
Var clamp(Var x, double lo, double hi) {
  MG_CHECK(lo <= hi, "clamp: lo ", lo, " > hi ", hi);
  return unary<ClampRule>(kOp_clamp, x, lo, hi);
}
Var where(Var mask, Var a, Var b) {
  MG_CHECK(mask.tape == a.tape && a.tape == b.tape, "where: inputs from different tapes");
  MG_CHECK(mask.dtype() == a.dtype() && a.dtype() == b.dtype(), "where: dtypes differ");
  const BroadcastPlan pm = plan_broadcast("where", a.shape(), mask.shape());
  const BroadcastPlan pb = plan_broadcast("where", a.shape(), b.shape());
  MG_CHECK(pm.result == a.shape() && pb.result == a.shape(), "where: mask ", mask.shape(),
           " and b ", b.shape(), " must broadcast to a's shape ", a.shape());
  Var z = a.tape->record(kOp_where, a.shape(), a.dtype(), {mask, a, b}, where_backward);
  MG_DISPATCH(a.dtype(), T, {
    const T *pmask = mask.value().data<T>(), *pa = a.value().data<T>(), *pbv = b.value().data<T>();
    T* pz = a.tape->value(z.id).data<T>();
    if (b.shape() == a.shape()) {  // the common case: runs with a contiguous select
      for_each_run(pm, [&](int64_t o, int64_t, int64_t j, int64_t n, auto, auto sm) {
        if constexpr (decltype(sm)::value == 0)  // one mask value for the run: a block copy
          std::copy_n((pmask[j] != T(0) ? pa : pbv) + o, n, pz + o);
        else
          for (int64_t k = 0; k < n; ++k) pz[o + k] = pmask[j + k] != T(0) ? pa[o + k] : pbv[o + k];
      });
    } else {
      for_each_broadcast(pm, [&](int64_t o, int64_t, int64_t j) {
        pz[o] = pmask[j] != T(0) ? pa[o] : pbv[b_index(pb, o)];
      });
    }
  });
  return z;
}

Var scale(Var x, double factor) { return unary<ScaleRule>(kOp_scale, x, factor); }
Var add_scalar(Var x, double c) { return unary<AddScalarRule>(kOp_add_scalar, x, c); }
Var scale_shift(Var x, double factor, double shift) {
  return unary<ScaleShiftRule>(kOp_scale_shift, x, factor, shift);
}

}  // namespace memgrad

// ---------------------------------------------------------------- gradient-check cases
namespace memgrad {
namespace {

using Build2 = Var (*)(Var, Var);
using Build1 = std::function<Var(Var)>;

// Every binary op on: equal shapes, a row bias [D] against [B,T,D], a column scale [N,1] against
// [N,D], a scalar [1], and batch 1. Divisors are kept in [0.5, 2] (away from 0).
void register_binary(const char* op, Build2 f, double b_lo, double b_hi) {
  struct ShapePair {
    const char* label;
    Shape a, b;
  };
  const ShapePair shapes[] = {{"same", {3, 4}, {3, 4}},
                              {"row-broadcast", {2, 3, 4}, {4}},
                              {"column-broadcast", {5, 3}, {5, 1}},
                              {"a-broadcast", {5, 1}, {5, 3}},
                              {"scalar", {2, 3}, {1}},
                              {"batch1", {1, 4}, {1, 4}}};
  for (const ShapePair& s : shapes) {
    register_grad_case({.op = op,
                        .name = std::string(op) + "/" + s.label,
                        .make_inputs =
                            [s, b_lo, b_hi](Rng& r) {
                              return std::vector<GradInput>{{random_tensor(r, s.a)},
                                                            {random_tensor(r, s.b, b_lo, b_hi)}};
                            },
                        .build = [f](Tape&, std::span<const Var> v) { return f(v[0], v[1]); }});
  }
}

// A unary op on two shapes (one of batch 1), inputs drawn from [lo, hi).
void register_unary(const char* op, Build1 f, double lo, double hi, const char* note = "") {
  const Shape shapes[] = {{3, 5}, {1, 2, 3}};
  for (const Shape& s : shapes)
    register_grad_case(
        {.op = op,
         .name = std::string(op) + "/" + s.str(),
         .make_inputs =
             [s, lo, hi](Rng& r) { return std::vector<GradInput>{{random_tensor(r, s, lo, hi)}}; },
         .build = [f](Tape&, std::span<const Var> v) { return f(v[0]); },
         .note = note});
}

// Values in [lo, hi) kept at least `gap` away from every point in `kinks` (non-differentiable
// points such as relu's 0 or clamp's bounds), so central differences never straddle one.
Tensor away_from(Rng& r, const Shape& s, double lo, double hi, std::vector<double> kinks,
                 double gap) {
  Tensor t = random_tensor(r, s, lo, hi);
  double* p = t.data<double>();
  for (int64_t i = 0; i < t.numel(); ++i)
    for (double k : kinks)
      if (std::fabs(p[i] - k) < gap) p[i] = k + (p[i] < k ? -gap : gap);
  return t;
}

const bool kElementwiseCases = [] {
  register_binary("add", add, -1, 1);
  register_binary("sub", sub, -1, 1);
  register_binary("mul", mul, -1, 1);
  register_binary("div", div, 0.5, 2);
  register_binary("mul_complement", mul_complement, -1, 1);
  // clang-format off
  register_unary("neg", [](Var x) { return neg(x); }, -2, 2);
  register_unary("exp", [](Var x) { return exp(x); }, -2, 2);
  register_unary("log", [](Var x) { return log(x); }, 0.2, 3, "inputs in [0.2, 3): log needs x > 0");
  register_unary("sqrt", [](Var x) { return sqrt(x); }, 0.2, 3, "inputs in [0.2, 3)");
  register_unary("pow", [](Var x) { return pow(x, 2.5); }, 0.2, 3, "x^2.5 on [0.2, 3)");
  register_unary("sigmoid", [](Var x) { return sigmoid(x); }, -4, 4);
  register_unary("tanh", [](Var x) { return tanh(x); }, -3, 3);
  register_unary("softplus", [](Var x) { return softplus(x); }, -5, 5);
  register_unary("scale", [](Var x) { return scale(x, -1.7); }, -2, 2);
  register_unary("add_scalar", [](Var x) { return add_scalar(x, 0.3); }, -2, 2);
  register_unary("scale_shift", [](Var x) { return scale_shift(x, -1.3, 0.7); }, -2, 2);
  // clang-format on
  for (const Shape& s : {Shape{3, 5}, Shape{1, 4}}) {
    register_grad_case(
        {.op = "relu",
         .name = "relu/" + s.str(),
         .make_inputs =
             [s](Rng& r) { return std::vector<GradInput>{{away_from(r, s, -2, 2, {0.0}, 0.05)}}; },
         .build = [](Tape&, std::span<const Var> v) { return relu(v[0]); },
         .note = "inputs kept 0.05 away from 0, where relu has no derivative"});
    register_grad_case(
        {.op = "clamp",
         .name = "clamp/" + s.str(),
         .make_inputs =
             [s](Rng& r) {
               return std::vector<GradInput>{{away_from(r, s, -2, 2, {-0.5, 0.8}, 0.05)}};
             },
         .build = [](Tape&, std::span<const Var> v) { return clamp(v[0], -0.5, 0.8); },
         .note = "inputs kept 0.05 away from the bounds -0.5 and 0.8"});
  }
  for (const auto& [label, xs, ss] : {std::tuple{"shared-slope", Shape{3, 4}, Shape{1}},
                                      std::tuple{"per-channel", Shape{2, 3, 4}, Shape{4}},
                                      std::tuple{"batch1", Shape{1, 4}, Shape{4}}}) {
    register_grad_case({.op = "prelu",
                        .name = std::string("prelu/") + label,
                        .make_inputs =
                            [xs, ss](Rng& r) {
                              return std::vector<GradInput>{{away_from(r, xs, -2, 2, {0.0}, 0.05)},
                                                            {random_tensor(r, ss, 0.05, 0.5)}};
                            },
                        .build = [](Tape&, std::span<const Var> v) { return prelu(v[0], v[1]); },
                        .note = "x kept 0.05 away from 0"});
  }
  for (const auto& [label, ms, bs] : {std::tuple{"same", Shape{3, 4}, Shape{3, 4}},
                                      std::tuple{"column-mask", Shape{3, 1}, Shape{1}},
                                      std::tuple{"batch1", Shape{1, 4}, Shape{1, 4}}}) {
    register_grad_case(
        {.op = "where",
         .name = std::string("where/") + label,
         .make_inputs =
             [ms, bs](Rng& r) {
               Tensor mask = random_tensor(r, ms, 0, 1);
               for (int64_t i = 0; i < mask.numel(); ++i) mask.set(i, mask.at(i) < 0.5 ? 0.0 : 1.0);
               const Shape as = bs.rank == 1 && bs[0] == 1 ? Shape{3, 4} : bs;
               return std::vector<GradInput>{
                   {mask, false}, {random_tensor(r, as)}, {random_tensor(r, bs)}};
             },
         .build = [](Tape&, std::span<const Var> v) { return where(v[0], v[1], v[2]); },
         .note = "the mask is data (0/1), not differentiated"});
  }
  return true;
}();

}  // namespace
}  // namespace memgrad
