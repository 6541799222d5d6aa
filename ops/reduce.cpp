// Reductions. Axis reductions view the input as [outer, n, inner] (n the reduced axis) and the
// output as [outer, inner]; backward spreads each output gradient back over its n inputs.
#include "ops/reduce.hpp"

#include <cmath>
#include <string>
#include <utility>

#include "engine/gradcheck.hpp"
#include "engine/sum_in_double.hpp"

namespace memgrad {
namespace {

MG_OP_READS(sum, kReadsNothing);
MG_OP(mean);
MG_OP(max);
MG_OP_READS(sum_axis, kReadsNothing);
MG_OP(mean_axis);
MG_OP_READS(max_axis, kReadsNothing);
MG_OP(logsumexp);

// ---------------------------------------------------------------- whole-tensor reductions
// sum and mean: y = scale * sum(x), scale = 1 or 1/n (saved in reals[0]); dx = scale * dy.
void sum_backward(Tape& tape, NodeId id) {
  const NodeId ix = tape.input_id(id, 0);
  if (!tape.requires_grad(ix)) return;
  const double scale = tape.node(id).reals[0];
  MG_DISPATCH(tape.value(id).dtype(), T, {
    const T g = T(double(tape.grad(id).data<T>()[0]) * scale);
    T* gx = tape.grad(ix).data<T>();
    const int64_t n = tape.value(ix).numel();
    for (int64_t i = 0; i < n; ++i) gx[i] += g;
  });
}

Var sum_all(const OpDef& op, Var x, bool average) {
  MG_CHECK(x.defined(), op.name, ": undefined input");
  const int64_t n = x.value().numel();
  MG_CHECK(!average || n > 0, op.name, ": empty input of shape ", x.shape());
  const double scale = average ? 1.0 / double(n) : 1.0;
  Var y = x.tape->record(op, Shape{1}, x.dtype(), {x}, sum_backward);
  x.tape->node(y.id).reals[0] = scale;
  MG_DISPATCH(x.dtype(), T, {
    const T* px = x.value().data<T>();
    double s = 0;  // double accumulator: float32 sums of many elements stay accurate
    for (int64_t i = 0; i < n; ++i) s += double(px[i]);
    x.tape->value(y.id).data<T>()[0] = T(s * scale);
  });
  return y;
}

// max: the flat argmax is saved in ints[0]; dx[argmax] = dy.
void max_backward(Tape& tape, NodeId id) {
  const NodeId ix = tape.input_id(id, 0);
  if (!tape.requires_grad(ix)) return;
  const int64_t arg = tape.node(id).ints[0];
  MG_DISPATCH(tape.value(id).dtype(), T,
              { tape.grad(ix).data<T>()[arg] += tape.grad(id).data<T>()[0]; });
}

// ---------------------------------------------------------------- axis reductions
struct AxisPlan {
  int axis = 0;  // normalised, in [0, rank)
  int64_t outer = 1, n = 1, inner = 1;
  Shape out;
};

AxisPlan plan_axis(const char* op, const Shape& s, int axis, bool keepdim) {
  MG_CHECK(s.rank >= 1, op, ": needs an input of rank >= 1, got shape ", s);
  MG_CHECK(axis >= -s.rank && axis < s.rank, op, ": axis ", axis, " out of range for shape ", s);
  AxisPlan p;
  p.axis = axis < 0 ? axis + s.rank : axis;
  for (int i = 0; i < s.rank; ++i) {
    if (i < p.axis) p.outer *= s[i];
    if (i > p.axis) p.inner *= s[i];
  }
  p.n = s[p.axis];
  if (keepdim) {
    p.out = s;
    p.out[p.axis] = 1;
  } else if (s.rank == 1) {
    p.out = Shape{1};
  } else {
    p.out.rank = s.rank - 1;
    for (int i = 0, j = 0; i < s.rank; ++i)
      if (i != p.axis) p.out[j++] = s[i];
  }
  return p;
}

// The plan of node id's reduction, from its input's shape and the saved axis and keepdim.
AxisPlan node_plan(Tape& tape, NodeId id) {
  const Node& n = tape.node(id);
  return plan_axis(n.op->name, tape.value(tape.input_id(id, 0)).shape(), int(n.ints[0]),
                   n.ints[1] != 0);
}

Var record_axis(const OpDef& op, Var x, const AxisPlan& p, bool keepdim, BackwardFn backward) {
  Var y = x.tape->record(op, p.out, x.dtype(), {x}, backward);
  x.tape->node(y.id).ints = {p.axis, keepdim ? 1 : 0, 0, 0};
  return y;
}

// sum_axis and mean_axis: y[o,i] = scale * sum_k x[o,k,i]; dx[o,k,i] = scale * dy[o,i].
void sum_axis_backward(Tape& tape, NodeId id) {
  const NodeId ix = tape.input_id(id, 0);
  if (!tape.requires_grad(ix)) return;
  const AxisPlan p = node_plan(tape, id);
  const double scale = tape.node(id).reals[0];
  MG_DISPATCH(tape.value(id).dtype(), T, {
    const T* g = tape.grad(id).data<T>();
    bool overwrite = false;  // every element of dx is written once: no zeroing needed
    T* gx = tape.grad_for_write(ix, overwrite).data<T>();
    const T c = T(scale);
    if (p.inner == 1) {
      // Reduced over the last axis: each output gradient spreads over a contiguous slice.
      for (int64_t o = 0; o < p.outer; ++o) {
        T* row = gx + o * p.n;
        const T v = c * g[o];
        if (overwrite)
          for (int64_t k = 0; k < p.n; ++k) row[k] = v;
        else
          for (int64_t k = 0; k < p.n; ++k) row[k] += v;
      }
    } else {
      for (int64_t o = 0; o < p.outer; ++o)
        for (int64_t k = 0; k < p.n; ++k) {
          T* row = gx + (o * p.n + k) * p.inner;
          const T* grow = g + o * p.inner;
          if (overwrite)
            for (int64_t i = 0; i < p.inner; ++i) row[i] = c * grow[i];
          else
            for (int64_t i = 0; i < p.inner; ++i) row[i] += c * grow[i];
        }
    }
  });
}

Var sum_over_axis(const OpDef& op, Var x, int axis, bool keepdim, bool average) {
  MG_CHECK(x.defined(), op.name, ": undefined input");
  const AxisPlan p = plan_axis(op.name, x.shape(), axis, keepdim);
  MG_CHECK(!average || p.n > 0, op.name, ": axis ", axis, " of shape ", x.shape(), " is empty");
  const double scale = average ? 1.0 / double(p.n) : 1.0;
  Var y = record_axis(op, x, p, keepdim, sum_axis_backward);
  x.tape->node(y.id).reals[0] = scale;
  MG_DISPATCH(x.dtype(), T, {
    const T* px = x.value().data<T>();
    T* py = x.tape->value(y.id).data<T>();
    if (p.inner == 1) {
      // Contiguous slices, each summed in double (sum_in_double: four partial sums).
      for (int64_t o = 0; o < p.outer; ++o)
        py[o] = T(sum_in_double(px + o * p.n, p.n, [](T v) { return double(v); }) * scale);
    } else {
      // Walk rows of length inner in memory order, accumulating into the output row.
      for (int64_t o = 0; o < p.outer; ++o) {
        T* out = py + o * p.inner;
        for (int64_t i = 0; i < p.inner; ++i) out[i] = T(0);
        for (int64_t k = 0; k < p.n; ++k) {
          const T* row = px + (o * p.n + k) * p.inner;
          for (int64_t i = 0; i < p.inner; ++i) out[i] += row[i];
        }
        if (average)
          for (int64_t i = 0; i < p.inner; ++i) out[i] *= T(scale);
      }
    }
  });
  return y;
}

// max_axis: the argmax k of each output element is saved (float64, output shape);
// dx[o, k*, i] = dy[o, i].
void max_axis_backward(Tape& tape, NodeId id) {
  const NodeId ix = tape.input_id(id, 0);
  if (!tape.requires_grad(ix)) return;
  const AxisPlan p = node_plan(tape, id);
  const double* arg = tape.saved(id).data<double>();
  MG_DISPATCH(tape.value(id).dtype(), T, {
    const T* g = tape.grad(id).data<T>();
    T* gx = tape.grad(ix).data<T>();
    for (int64_t o = 0; o < p.outer; ++o)
      for (int64_t i = 0; i < p.inner; ++i) {
        const int64_t j = o * p.inner + i;
        gx[(o * p.n + int64_t(arg[j])) * p.inner + i] += g[j];
      }
  });
}

// logsumexp: dx[o,k,i] = dy[o,i] * exp(x[o,k,i] - y[o,i]) (the softmax, from the saved output).
void logsumexp_backward(Tape& tape, NodeId id) {
  const NodeId ix = tape.input_id(id, 0);
  if (!tape.requires_grad(ix)) return;
  const AxisPlan p = node_plan(tape, id);
  MG_DISPATCH(tape.value(id).dtype(), T, {
    const T *px = tape.value(ix).data<T>(), *py = tape.value(id).data<T>();
    const T* g = tape.grad(id).data<T>();
    T* gx = tape.grad(ix).data<T>();
    for (int64_t o = 0; o < p.outer; ++o)
      for (int64_t i = 0; i < p.inner; ++i) {
        const int64_t j = o * p.inner + i;
        // An all -inf slice (y = -inf) has no softmax: it gets no gradient.
        if (!std::isfinite(py[j])) continue;
        for (int64_t k = 0; k < p.n; ++k) {
          const int64_t e = (o * p.n + k) * p.inner + i;
          gx[e] += g[j] * std::exp(px[e] - py[j]);
        }
      }
  });
}

}  // namespace

Var sum(Var x) { return sum_all(kOp_sum, x, false); }
Var mean(Var x) { return sum_all(kOp_mean, x, true); }

Var max(Var x) {
  MG_CHECK(x.defined(), "max: undefined input");
  const int64_t n = x.value().numel();
  MG_CHECK(n > 0, "max: empty input of shape ", x.shape());
  Var y = x.tape->record(kOp_max, Shape{1}, x.dtype(), {x}, max_backward);
  int64_t arg = 0;
  MG_DISPATCH(x.dtype(), T, {
    const T* px = x.value().data<T>();
    for (int64_t i = 1; i < n; ++i)
      if (px[i] > px[arg]) arg = i;  // strict: ties keep the first index
    x.tape->value(y.id).data<T>()[0] = px[arg];
  });
  x.tape->node(y.id).ints[0] = arg;
  return y;
}

Var sum_axis(Var x, int axis, bool keepdim) {
  return sum_over_axis(kOp_sum_axis, x, axis, keepdim, false);
}
Var mean_axis(Var x, int axis, bool keepdim) {
  return sum_over_axis(kOp_mean_axis, x, axis, keepdim, true);
}

Var max_axis(Var x, int axis, bool keepdim) {
  MG_CHECK(x.defined(), "max_axis: undefined input");
  const AxisPlan p = plan_axis("max_axis", x.shape(), axis, keepdim);
  MG_CHECK(p.n > 0, "max_axis: axis ", axis, " of shape ", x.shape(), " is empty");
  Var y = record_axis(kOp_max_axis, x, p, keepdim, max_axis_backward);
  double* arg = x.tape->make_saved(y.id, p.out, DType::f64).data<double>();
  MG_DISPATCH(x.dtype(), T, {
    const T* px = x.value().data<T>();
    T* py = x.tape->value(y.id).data<T>();
    for (int64_t o = 0; o < p.outer; ++o) {
      T* out = py + o * p.inner;
      double* a = arg + o * p.inner;
      const T* first = px + o * p.n * p.inner;
      for (int64_t i = 0; i < p.inner; ++i) {
        out[i] = first[i];
        a[i] = 0;
      }
      for (int64_t k = 1; k < p.n; ++k) {
        const T* row = first + k * p.inner;
        for (int64_t i = 0; i < p.inner; ++i)
          if (row[i] > out[i]) {  // strict: ties keep the first index
            out[i] = row[i];
            a[i] = double(k);
          }
      }
    }
  });
  return y;
}

Var logsumexp(Var x, int axis, bool keepdim) {
  MG_CHECK(x.defined(), "logsumexp: undefined input");
  const AxisPlan p = plan_axis("logsumexp", x.shape(), axis, keepdim);
  MG_CHECK(p.n > 0, "logsumexp: axis ", axis, " of shape ", x.shape(), " is empty");
  Var y = record_axis(kOp_logsumexp, x, p, keepdim, logsumexp_backward);
  MG_DISPATCH(x.dtype(), T, {
    const T* px = x.value().data<T>();
    T* py = x.tape->value(y.id).data<T>();
    for (int64_t o = 0; o < p.outer; ++o)
      for (int64_t i = 0; i < p.inner; ++i) {
        const T* s = px + o * p.n * p.inner + i;  // slice element k is s[k * inner]
        T m = s[0];
        for (int64_t k = 1; k < p.n; ++k) m = s[k * p.inner] > m ? s[k * p.inner] : m;
        if (!std::isfinite(m)) {  // all -inf gives -inf; any +inf gives +inf
          py[o * p.inner + i] = m;
          continue;
        }
        T acc = 0;
        for (int64_t k = 0; k < p.n; ++k) acc += std::exp(s[k * p.inner] - m);
        py[o * p.inner + i] = m + std::log(acc);
      }
  });
  return y;
}

}  // namespace memgrad

// ---------------------------------------------------------------- gradient-check cases
namespace memgrad {
namespace {

// Distinct values: a shuffled ladder with rungs `gap` apart, each jittered by at most gap/4, so
// any two elements differ by at least gap/2 (far more than the check's eps of 1e-6) and central
// differences never change which element is the maximum.
Tensor distinct_tensor(Rng& r, const Shape& s, double gap = 0.1) {
  Tensor t = Tensor::empty(s, DType::f64);
  double* p = t.data<double>();
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) p[i] = gap * (double(i) - 0.5 * double(n));
  for (int64_t i = n - 1; i > 0; --i) std::swap(p[i], p[int64_t(r.below(uint64_t(i + 1)))]);
  for (int64_t i = 0; i < n; ++i) p[i] += r.uniform(-gap / 4, gap / 4);
  return t;
}

struct AxisCase {
  Shape shape;
  int axis;
  bool keepdim;
};

std::string axis_label(const AxisCase& c) {
  return c.shape.str() + "/axis" + std::to_string(c.axis) + (c.keepdim ? "/keepdim" : "");
}

const bool kReduceCases = [] {
  constexpr const char* kMaxNote =
      "values distinct and at least 0.05 apart (shuffled ladder), so eps never changes the argmax";
  const Shape whole_shapes[] = {{3, 5}, {1, 4}, {2, 3, 4}, {7}};
  for (const Shape& s : whole_shapes) {
    register_grad_case(
        {.op = "sum",
         .name = "sum/" + s.str(),
         .make_inputs = [s](Rng& r) { return std::vector<GradInput>{{random_tensor(r, s)}}; },
         .build = [](Tape&, std::span<const Var> v) { return sum(v[0]); }});
    register_grad_case(
        {.op = "mean",
         .name = "mean/" + s.str(),
         .make_inputs = [s](Rng& r) { return std::vector<GradInput>{{random_tensor(r, s)}}; },
         .build = [](Tape&, std::span<const Var> v) { return mean(v[0]); }});
    register_grad_case(
        {.op = "max",
         .name = "max/" + s.str(),
         .make_inputs = [s](Rng& r) { return std::vector<GradInput>{{distinct_tensor(r, s)}}; },
         .build = [](Tape&, std::span<const Var> v) { return max(v[0]); },
         .note = kMaxNote});
  }
  const AxisCase axis_cases[] = {{{2, 3, 4}, 1, false},   {{2, 3, 4}, -1, true}, {{3, 5}, 0, false},
                                 {{1, 4}, 1, false},      {{1, 4}, 0, true},     {{5}, 0, false},
                                 {{2, 1, 3, 2}, 2, false}};
  for (const AxisCase& c : axis_cases) {
    register_grad_case(
        {.op = "sum_axis",
         .name = "sum_axis/" + axis_label(c),
         .make_inputs = [c](Rng& r) { return std::vector<GradInput>{{random_tensor(r, c.shape)}}; },
         .build = [c](Tape&,
                      std::span<const Var> v) { return sum_axis(v[0], c.axis, c.keepdim); }});
    register_grad_case(
        {.op = "mean_axis",
         .name = "mean_axis/" + axis_label(c),
         .make_inputs = [c](Rng& r) { return std::vector<GradInput>{{random_tensor(r, c.shape)}}; },
         .build = [c](Tape&,
                      std::span<const Var> v) { return mean_axis(v[0], c.axis, c.keepdim); }});
    register_grad_case(
        {.op = "max_axis",
         .name = "max_axis/" + axis_label(c),
         .make_inputs =
             [c](Rng& r) { return std::vector<GradInput>{{distinct_tensor(r, c.shape)}}; },
         .build = [c](Tape&, std::span<const Var> v) { return max_axis(v[0], c.axis, c.keepdim); },
         .note = kMaxNote});
    register_grad_case(
        {.op = "logsumexp",
         .name = "logsumexp/" + axis_label(c),
         .make_inputs =
             [c](Rng& r) { return std::vector<GradInput>{{random_tensor(r, c.shape, -3, 3)}}; },
         .build = [c](Tape&,
                      std::span<const Var> v) { return logsumexp(v[0], c.axis, c.keepdim); }});
  }
  register_grad_case(
      {.op = "logsumexp",
       .name = "logsumexp/shifted-large",
       .make_inputs =
           [](Rng& r) {
             return std::vector<GradInput>{{random_tensor(r, Shape{3, 4}, 100, 103)}};
           },
       .build = [](Tape&, std::span<const Var> v) { return logsumexp(v[0]); },
       .note = "inputs near 100: the max-shift keeps exp in range"});
  return true;
}();

}  // namespace
}  // namespace memgrad
