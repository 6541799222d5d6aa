// Row-wise neural-network ops: softmax, log_softmax, the fused losses cross_entropy and
// bce_with_logits, normalize, l2_norm and the fused LSTM update lstm_cell. Leading dims are folded
// into rows; each row is computed by one call of a row body, serially for small inputs and with
// parallel_for_each over rows for large ones (rows write disjoint outputs and every reduction over
// rows is summed afterwards in row order, so results do not depend on the thread count). Backward
// passes use the saved output (softmax's y, log_softmax's y, normalize's y and per-row norm,
// cross_entropy's saved probabilities).
#include "ops/nn.hpp"

#include <algorithm>
#include <cmath>

#include "engine/gradcheck.hpp"
#include "engine/sum_in_double.hpp"
#include "engine/threads.hpp"
#include "ops/linalg.hpp"
#include "ops/vec_math.hpp"

namespace memgrad {
namespace {

MG_OP_READS(softmax, kReadsOutput);
MG_OP_READS(log_softmax, kReadsOutput);
MG_OP_READS(cross_entropy, reads_inputs({1, 2}));
MG_OP(bce_with_logits);
MG_OP_READS(normalize, kReadsOutput);
MG_OP(l2_norm);
MG_OP_READS(lstm_cell, reads_inputs({1}));

// Below this many elements, rows run serially (a task costs more than the work).
constexpr int64_t kParallelElems = int64_t(1) << 15;
constexpr int64_t kGrainElems = int64_t(1) << 13;

// Product of all dims but the last: the number of rows when leading dims are folded.
int64_t folded_rows(const Shape& s) {
  int64_t rows = 1;
  for (int i = 0; i + 1 < s.rank; ++i) rows *= s.dims[size_t(i)];
  return rows;
}

// Calls body(i) once for every row i in [0, rows); rows of `cols` elements.
template <class Body>
void for_rows(int64_t rows, int64_t cols, Body&& body) {
  if (rows < 2 || rows * cols < kParallelElems) {
    for (int64_t i = 0; i < rows; ++i) body(i);
    return;
  }
  parallel_for_each(rows, body, std::max<int64_t>(1, kGrainElems / std::max<int64_t>(cols, 1)));
}

void check_rows(const char* op, Var x) {
  MG_CHECK(x.defined(), op, ": undefined input");
  MG_CHECK(x.shape().rank >= 1 && x.dim(-1) >= 1, op, ": needs a non-empty last axis, got ",
           x.shape());
}

template <class T>
T row_max(const T* x, int64_t n) {
  T m = x[0];
  for (int64_t j = 1; j < n; ++j) m = std::max(m, x[j]);
  return m;
}

// Logistic function with exp's argument kept non-positive (no overflow).
template <class T>
T stable_sigmoid(T x) {
  if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
  const T e = std::exp(x);
  return e / (T(1) + e);
}

// ---------------------------------------------------------------- softmax
// y = exp(x - max) / sum(exp(x - max));  gx = y * (g - sum(g * y)).
void softmax_backward(Tape& tape, NodeId id) {
  const NodeId ix = tape.input_id(id, 0);
  if (!tape.requires_grad(ix)) return;
  const Tensor& y = tape.value(id);
  const int64_t cols = y.dim(-1), rows = folded_rows(y.shape());
  MG_DISPATCH(y.dtype(), T, {
    const T *py = y.data<T>(), *g = tape.grad(id).data<T>();
    T* gx = tape.grad(ix).data<T>();
    for_rows(rows, cols, [&](int64_t i) {
      const T *yr = py + i * cols, *gr = g + i * cols;
      T* gxr = gx + i * cols;
      T dot = 0;
      for (int64_t j = 0; j < cols; ++j) dot += gr[j] * yr[j];
      for (int64_t j = 0; j < cols; ++j) gxr[j] += yr[j] * (gr[j] - dot);
    });
  });
}

// ---------------------------------------------------------------- log_softmax
// y = x - max - log(sum(exp(x - max)));  gx = g - exp(y) * sum(g).
void log_softmax_backward(Tape& tape, NodeId id) {
  const NodeId ix = tape.input_id(id, 0);
  if (!tape.requires_grad(ix)) return;
  const Tensor& y = tape.value(id);
  const int64_t cols = y.dim(-1), rows = folded_rows(y.shape());
  MG_DISPATCH(y.dtype(), T, {
    const T *py = y.data<T>(), *g = tape.grad(id).data<T>();
    T* gx = tape.grad(ix).data<T>();
    for_rows(rows, cols, [&](int64_t i) {
      const T *yr = py + i * cols, *gr = g + i * cols;
      T* gxr = gx + i * cols;
      T sum = 0;
      for (int64_t j = 0; j < cols; ++j) sum += gr[j];
      for (int64_t j = 0; j < cols; ++j) gxr[j] += gr[j] - std::exp(yr[j]) * sum;
    });
  });
}

// ---------------------------------------------------------------- cross_entropy
// Inputs {logits, targets[, mask]}; reals[0] = number of unmasked rows. saved [rows, C + 1]: an
// unmasked row's softmax in columns [0, C) and its loss in column C (0 for masked rows).
// gx = g * (softmax - onehot(target)) * mask / count.
void cross_entropy_backward(Tape& tape, NodeId id) {
  const NodeId ix = tape.input_id(id, 0);
  if (!tape.requires_grad(ix)) return;
  const Node& node = tape.node(id);
  const double count = node.reals[0];
  if (count == 0) {  // everything masked: the loss is the constant 0, its gradient zeros
    tape.grad(ix);
    return;
  }
  const Tensor& targets = tape.value(tape.input_id(id, 1));
  const Tensor* mask = node.num_inputs == 3 ? &tape.value(tape.input_id(id, 2)) : nullptr;
  const Tensor& saved = tape.saved(id);
  const int64_t rows = saved.dim(0), cols = saved.dim(1) - 1;
  MG_DISPATCH(targets.dtype(), T, {
    const T scale = T(double(tape.grad(id).data<T>()[0]) / count);
    const T *pt = targets.data<T>(), *pm = mask ? mask->data<T>() : nullptr;
    const T* ps = saved.data<T>();
    T* gx = tape.grad(ix).data<T>();
    for_rows(rows, cols, [&](int64_t i) {
      if (pm && pm[i] == T(0)) return;
      const T* pr = ps + i * (cols + 1);
      T* gr = gx + i * cols;
      for (int64_t j = 0; j < cols; ++j) gr[j] += scale * pr[j];
      gr[int64_t(pt[i])] -= scale;
    });
  });
}

// ---------------------------------------------------------------- bce_with_logits
// Inputs {logits, targets[, mask]}; ints[0] = mask mode, reals[0] = number of unmasked elements.
// saved [rows] float64: each row's loss sum (summed in row order for the output).
// gx = g * (sigmoid(x) - t) * mask / count.
enum MaskMode : int64_t { kNoMask = 0, kElementMask = 1, kRowMask = 2 };

template <class T>
bool unmasked(const T* pm, int64_t mode, int64_t row, int64_t elem) {
  if (mode == kNoMask) return true;
  return (mode == kElementMask ? pm[elem] : pm[row]) != T(0);
}

void bce_backward(Tape& tape, NodeId id) {
  const NodeId ix = tape.input_id(id, 0);
  if (!tape.requires_grad(ix)) return;
  const Node& node = tape.node(id);
  const double count = node.reals[0];
  if (count == 0) {
    tape.grad(ix);  // materialised as zeros, as for cross_entropy
    return;
  }
  const int64_t mode = node.ints[0];
  const Tensor &x = tape.value(ix), &targets = tape.value(tape.input_id(id, 1));
  const Tensor* mask = mode != kNoMask ? &tape.value(tape.input_id(id, 2)) : nullptr;
  const int64_t cols = x.dim(-1), rows = folded_rows(x.shape());
  MG_DISPATCH(x.dtype(), T, {
    const T scale = T(double(tape.grad(id).data<T>()[0]) / count);
    const T *px = x.data<T>(), *pt = targets.data<T>(), *pm = mask ? mask->data<T>() : nullptr;
    T* gx = tape.grad(ix).data<T>();
    for_rows(rows, cols, [&](int64_t i) {
      for (int64_t e = i * cols; e < (i + 1) * cols; ++e)
        if (unmasked(pm, mode, i, e)) gx[e] += scale * (stable_sigmoid(px[e]) - pt[e]);
    });
  });
}

// ---------------------------------------------------------------- normalize
// y = x / s with s = sqrt(sum(x^2) + eps) per row (saved [rows]);  gx = (g - y * sum(g * y)) / s.
void normalize_backward(Tape& tape, NodeId id) {
  const NodeId ix = tape.input_id(id, 0);
  if (!tape.requires_grad(ix)) return;
  const Tensor &y = tape.value(id), &norms = tape.saved(id);
  const int64_t cols = y.dim(-1), rows = folded_rows(y.shape());
  MG_DISPATCH(y.dtype(), T, {
    const T *py = y.data<T>(), *g = tape.grad(id).data<T>(), *ps = norms.data<T>();
    T* gx = tape.grad(ix).data<T>();
    for_rows(rows, cols, [&](int64_t i) {
      const T *yr = py + i * cols, *gr = g + i * cols;
      T* gxr = gx + i * cols;
      T dot = 0;
      for (int64_t j = 0; j < cols; ++j) dot += gr[j] * yr[j];
      const T inv = T(1) / ps[i];
      for (int64_t j = 0; j < cols; ++j) gxr[j] += (gr[j] - yr[j] * dot) * inv;
    });
  });
}

// ---------------------------------------------------------------- l2_norm
// y = sqrt(sum(x^2) + eps) per row, shape [..., 1];  gx = g * x / y (one pass, no saved tensor).
void l2_norm_backward(Tape& tape, NodeId id) {
  const NodeId ix = tape.input_id(id, 0);
  if (!tape.requires_grad(ix)) return;
  const Tensor &x = tape.value(ix), &y = tape.value(id);
  const int64_t cols = x.dim(-1), rows = folded_rows(x.shape());
  MG_DISPATCH(y.dtype(), T, {
    const T *px = x.data<T>(), *py = y.data<T>(), *g = tape.grad(id).data<T>();
    bool overwrite = false;  // every element of gx is written: no zeroing on first use
    T* gx = tape.grad_for_write(ix, overwrite).data<T>();
    for_rows(rows, cols, [&](int64_t i) {
      const T* xr = px + i * cols;
      T* gxr = gx + i * cols;
      const T s = g[i] / py[i];
      if (overwrite)
        for (int64_t j = 0; j < cols; ++j) gxr[j] = s * xr[j];
      else
        for (int64_t j = 0; j < cols; ++j) gxr[j] += s * xr[j];
    });
  });
}

// ---------------------------------------------------------------- lstm_cell
// y[i] = sigmoid(x[i]) or tanh(x[i]) for i in [0, n): float32 through the SIMD versions of
// vec_math.hpp, float64 through libm.
template <class T>
void activate(const T* x, T* y, int64_t n, bool use_tanh) {
  if constexpr (sizeof(T) == 4) {
    if (use_tanh)
      vec::map(x, y, n, [](vec::f32v v) { return vec::tanh(v); });
    else
      vec::map(x, y, n, [](vec::f32v v) { return vec::sigmoid(v); });
  } else {
    for (int64_t j = 0; j < n; ++j) y[j] = use_tanh ? std::tanh(x[j]) : stable_sigmoid(x[j]);
  }
}

// Saved per row [i | f | g | o | tanh(c)] (5H): the activations backward needs, so nothing is
// recomputed. With dh, dc the two halves of the output gradient:
//   dc~ = dc + dh o (1 - tanh(c)^2)      (c feeds h through tanh)
//   d(o pre) = dh tanh(c) o (1 - o),  d(i pre) = dc~ g i (1 - i),  d(f pre) = dc~ c_prev f (1 - f),
//   d(g pre) = dc~ i (1 - g^2),       dc_prev = dc~ f.
void lstm_cell_backward(Tape& tape, NodeId id) {
  const NodeId ig = tape.input_id(id, 0), ic = tape.input_id(id, 1);
  const bool want_g = tape.requires_grad(ig), want_c = tape.requires_grad(ic);
  const Tensor& cp = tape.value(ic);
  const int64_t B = cp.dim(0), H = cp.dim(1);
  MG_DISPATCH(cp.dtype(), T, {
    const T *g = tape.grad(id).data<T>(), *ps = tape.saved(id).data<T>(), *pc = cp.data<T>();
    bool over_g = false, over_c = false;
    T* gg = want_g ? tape.grad_for_write(ig, over_g).data<T>() : nullptr;
    T* gc = want_c ? tape.grad_for_write(ic, over_c).data<T>() : nullptr;
    for_rows(B, 4 * H, [&](int64_t b) {
      const T *si = ps + b * 5 * H, *sf = si + H, *sg = si + 2 * H, *so = si + 3 * H;
      const T *stc = si + 4 * H, *dh = g + b * 2 * H, *dc = dh + H, *cpr = pc + b * H;
      T* ggr = gg ? gg + b * 4 * H : nullptr;
      T* gcr = gc ? gc + b * H : nullptr;
      for (int64_t j = 0; j < H; ++j) {
        const T i = si[j], f = sf[j], gv = sg[j], o = so[j], tc = stc[j];
        const T dct = dc[j] + dh[j] * o * (T(1) - tc * tc);
        if (ggr) {
          const T d[4] = {dct * gv * i * (T(1) - i), dct * cpr[j] * f * (T(1) - f),
                          dct * i * (T(1) - gv * gv), dh[j] * tc * o * (T(1) - o)};
          for (int k = 0; k < 4; ++k) ggr[k * H + j] = over_g ? d[k] : ggr[k * H + j] + d[k];
        }
        if (gcr) gcr[j] = over_c ? dct * f : gcr[j] + dct * f;
      }
    });
  });
}

// Checks shared by the two losses: same tape and dtype for all defined inputs.
void check_loss_inputs(const char* op, Var logits, Var targets, Var mask) {
  MG_CHECK(logits.defined() && targets.defined(), op, ": undefined logits or targets");
  MG_CHECK(logits.tape == targets.tape && (!mask.defined() || mask.tape == logits.tape), op,
           ": inputs from different tapes");
  MG_CHECK(targets.dtype() == logits.dtype() && (!mask.defined() || mask.dtype() == logits.dtype()),
           op, ": targets and mask must have the logits' dtype ", dtype_name(logits.dtype()),
           " (whole numbers travel as floats)");
}

}  // namespace

Var softmax(Var x) {
  check_rows("softmax", x);
  const int64_t cols = x.dim(-1), rows = folded_rows(x.shape());
  Var y = x.tape->record(kOp_softmax, x.shape(), x.dtype(), {x}, softmax_backward);
  MG_DISPATCH(x.dtype(), T, {
    const T* px = x.value().data<T>();
    T* py = x.tape->value(y.id).data<T>();
    for_rows(rows, cols, [&](int64_t i) {
      const T* xr = px + i * cols;
      T* yr = py + i * cols;
      const T mx = row_max(xr, cols);
      T sum = 0;
      for (int64_t j = 0; j < cols; ++j) sum += (yr[j] = std::exp(xr[j] - mx));
      const T inv = T(1) / sum;
      for (int64_t j = 0; j < cols; ++j) yr[j] *= inv;
    });
  });
  return y;
}

Var log_softmax(Var x) {
  check_rows("log_softmax", x);
  const int64_t cols = x.dim(-1), rows = folded_rows(x.shape());
  Var y = x.tape->record(kOp_log_softmax, x.shape(), x.dtype(), {x}, log_softmax_backward);
  MG_DISPATCH(x.dtype(), T, {
    const T* px = x.value().data<T>();
    T* py = x.tape->value(y.id).data<T>();
    for_rows(rows, cols, [&](int64_t i) {
      const T* xr = px + i * cols;
      T* yr = py + i * cols;
      const T mx = row_max(xr, cols);
      T sum = 0;
      for (int64_t j = 0; j < cols; ++j) sum += std::exp(xr[j] - mx);
      const T lse = mx + std::log(sum);
      for (int64_t j = 0; j < cols; ++j) yr[j] = xr[j] - lse;
    });
  });
  return y;
}

Var cross_entropy(Var logits, Var targets, Var mask) {
  check_loss_inputs("cross_entropy", logits, targets, mask);
  const Shape& ls = logits.shape();
  MG_CHECK(ls.rank >= 2 && ls.rank <= 4 && ls[-1] >= 1,
           "cross_entropy: logits must be [..., C] of rank 2 to 4 with C >= 1, got ", ls);
  const Shape row_shape = Shape::of(ls.dims.data(), ls.rank - 1);
  MG_CHECK(targets.shape() == row_shape, "cross_entropy: targets ", targets.shape(),
           " must have the logits' shape without the class dim: logits ", ls, " -> targets ",
           row_shape);
  MG_CHECK(!mask.defined() || mask.shape() == row_shape, "cross_entropy: mask ",
           mask.defined() ? mask.shape() : Shape{}, " must have the targets' shape ", row_shape);
  const int64_t rows = row_shape.numel(), cols = ls[-1];
  // Validate the data before recording anything; masked positions are not read.
  double count = 0;
  MG_DISPATCH(logits.dtype(), T, {
    const T* pt = targets.value().data<T>();
    const T* pm = mask.defined() ? mask.value().data<T>() : nullptr;
    for (int64_t i = 0; i < rows; ++i) {
      if (pm) {
        MG_CHECK(pm[i] == T(0) || pm[i] == T(1), "cross_entropy: mask value ", double(pm[i]),
                 " at position ", i, " is not 0 or 1");
        if (pm[i] == T(0)) continue;
      }
      const double t = double(pt[i]);
      MG_CHECK(t >= 0 && t < double(cols) && t == std::floor(t), "cross_entropy: target ", t,
               " at position ", i, " is not a whole number in [0, ", cols, ")");
      count += 1;
    }
  });
  Tape& tape = *logits.tape;
  Var out = mask.defined() ? tape.record(kOp_cross_entropy, Shape{1}, logits.dtype(),
                                         {logits, targets, mask}, cross_entropy_backward)
                           : tape.record(kOp_cross_entropy, Shape{1}, logits.dtype(),
                                         {logits, targets}, cross_entropy_backward);
  tape.node(out.id).reals[0] = count;
  Tensor& saved = tape.make_saved(out.id, Shape{rows, cols + 1}, logits.dtype());
  MG_DISPATCH(logits.dtype(), T, {
    const T *px = logits.value().data<T>(), *pt = targets.value().data<T>();
    const T* pm = mask.defined() ? mask.value().data<T>() : nullptr;
    T* ps = saved.data<T>();
    for_rows(rows, cols, [&](int64_t i) {
      T* sr = ps + i * (cols + 1);
      if (pm && pm[i] == T(0)) {
        sr[cols] = T(0);
        return;
      }
      const T* xr = px + i * cols;
      const T mx = row_max(xr, cols);
      T sum = 0;
      for (int64_t j = 0; j < cols; ++j) sum += (sr[j] = std::exp(xr[j] - mx));
      const T inv = T(1) / sum;
      for (int64_t j = 0; j < cols; ++j) sr[j] *= inv;
      sr[cols] = mx + std::log(sum) - xr[int64_t(pt[i])];  // log-sum-exp minus the target logit
    });
    double total = 0;
    for (int64_t i = 0; i < rows; ++i) total += double(ps[i * (cols + 1) + cols]);
    tape.value(out.id).data<T>()[0] = T(count > 0 ? total / count : 0.0);
  });
  return out;
}

Var bce_with_logits(Var logits, Var targets, Var mask) {
  check_loss_inputs("bce_with_logits", logits, targets, mask);
  const Shape& ls = logits.shape();
  MG_CHECK(ls.rank >= 1 && ls[-1] >= 1, "bce_with_logits: logits need a non-empty last axis, got ",
           ls);
  MG_CHECK(targets.shape() == ls, "bce_with_logits: targets ", targets.shape(),
           " must have the logits' shape ", ls);
  const Shape row_shape = Shape::of(ls.dims.data(), ls.rank - 1);
  int64_t mode = kNoMask;
  if (mask.defined()) {
    if (mask.shape() == ls)
      mode = kElementMask;
    else if (ls.rank >= 2 && mask.shape() == row_shape)
      mode = kRowMask;
    else
      fail("bce_with_logits: mask ", mask.shape(), " must have the logits' shape ", ls,
           " (per element) or ", row_shape, " (per row)");
  }
  const int64_t cols = ls[-1], rows = folded_rows(ls);
  double count = 0;
  MG_DISPATCH(logits.dtype(), T, {
    const T* pt = targets.value().data<T>();
    const T* pm = mask.defined() ? mask.value().data<T>() : nullptr;
    if (pm)
      for (int64_t i = 0; i < mask.value().numel(); ++i)
        MG_CHECK(pm[i] == T(0) || pm[i] == T(1), "bce_with_logits: mask value ", double(pm[i]),
                 " at position ", i, " is not 0 or 1");
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t e = i * cols; e < (i + 1) * cols; ++e) {
        if (!unmasked(pm, mode, i, e)) continue;
        MG_CHECK(pt[e] >= T(0) && pt[e] <= T(1), "bce_with_logits: target ", double(pt[e]),
                 " at position ", e, " is not in [0, 1]");
        count += 1;
      }
  });
  Tape& tape = *logits.tape;
  Var out = mask.defined() ? tape.record(kOp_bce_with_logits, Shape{1}, logits.dtype(),
                                         {logits, targets, mask}, bce_backward)
                           : tape.record(kOp_bce_with_logits, Shape{1}, logits.dtype(),
                                         {logits, targets}, bce_backward);
  tape.node(out.id).ints[0] = mode;
  tape.node(out.id).reals[0] = count;
  Tensor& partial = tape.make_saved(out.id, Shape{rows}, DType::f64);
  MG_DISPATCH(logits.dtype(), T, {
    const T *px = logits.value().data<T>(), *pt = targets.value().data<T>();
    const T* pm = mask.defined() ? mask.value().data<T>() : nullptr;
    double* pp = partial.data<double>();
    for_rows(rows, cols, [&](int64_t i) {
      double s = 0;
      for (int64_t e = i * cols; e < (i + 1) * cols; ++e) {
        if (!unmasked(pm, mode, i, e)) continue;
        const T x = px[e];
        s += double(std::max(x, T(0)) - x * pt[e] + std::log1p(std::exp(-std::fabs(x))));
      }
      pp[i] = s;
    });
    double total = 0;
    for (int64_t i = 0; i < rows; ++i) total += pp[i];
    tape.value(out.id).data<T>()[0] = T(count > 0 ? total / count : 0.0);
  });
  return out;
}

Var normalize(Var x, double eps) {
  check_rows("normalize", x);
  MG_CHECK(eps > 0 && std::isfinite(eps), "normalize: eps must be positive and finite, got ", eps,
           " (input ", x.shape(), ")");
  const int64_t cols = x.dim(-1), rows = folded_rows(x.shape());
  Var y = x.tape->record(kOp_normalize, x.shape(), x.dtype(), {x}, normalize_backward);
  x.tape->node(y.id).reals[0] = eps;
  Tensor& norms = x.tape->make_saved(y.id, Shape{rows}, x.dtype());
  MG_DISPATCH(x.dtype(), T, {
    const T* px = x.value().data<T>();
    T *py = x.tape->value(y.id).data<T>(), *ps = norms.data<T>();
    for_rows(rows, cols, [&](int64_t i) {
      const T* xr = px + i * cols;
      T* yr = py + i * cols;
      T sq = 0;
      for (int64_t j = 0; j < cols; ++j) sq += xr[j] * xr[j];
      const T s = std::sqrt(sq + T(eps));
      ps[i] = s;
      const T inv = T(1) / s;
      for (int64_t j = 0; j < cols; ++j) yr[j] = xr[j] * inv;
    });
  });
  return y;
}

Var l2_norm(Var x, double eps) {
  check_rows("l2_norm", x);
  MG_CHECK(eps > 0 && std::isfinite(eps), "l2_norm: eps must be positive and finite, got ", eps,
           " (input ", x.shape(), ")");
  const int64_t cols = x.dim(-1), rows = folded_rows(x.shape());
  Shape out = x.shape();
  out[-1] = 1;
  Var y = x.tape->record(kOp_l2_norm, out, x.dtype(), {x}, l2_norm_backward);
  MG_DISPATCH(x.dtype(), T, {
    const T* px = x.value().data<T>();
    T* py = x.tape->value(y.id).data<T>();
    for_rows(rows, cols, [&](int64_t i) {
      const double sq = sum_in_double(px + i * cols, cols, square_in_double<T>);
      py[i] = T(std::sqrt(sq + eps));
    });
  });
  return y;
}

Var lstm_cell(Var gates, Var c_prev) {
  MG_CHECK(gates.defined() && c_prev.defined(), "lstm_cell: undefined input");
  MG_CHECK(gates.tape == c_prev.tape, "lstm_cell: inputs from different tapes");
  MG_CHECK(gates.dtype() == c_prev.dtype(), "lstm_cell: dtypes differ");
  MG_CHECK(c_prev.shape().rank == 2, "lstm_cell: c_prev must be [B, H], got ", c_prev.shape());
  const int64_t B = c_prev.dim(0), H = c_prev.dim(1);
  MG_CHECK(gates.shape() == Shape({B, 4 * H}), "lstm_cell: gates must be [", B, ", ", 4 * H,
           "] for c_prev ", c_prev.shape(), ", got ", gates.shape());
  Tape& tape = *gates.tape;
  Var y = tape.record(kOp_lstm_cell, Shape{B, 2 * H}, gates.dtype(), {gates, c_prev},
                      lstm_cell_backward);
  Tensor& saved = tape.make_saved(y.id, Shape{B, 5 * H}, gates.dtype());
  MG_DISPATCH(gates.dtype(), T, {
    const T *pg = gates.value().data<T>(), *pc = c_prev.value().data<T>();
    T *py = tape.value(y.id).data<T>(), *ps = saved.data<T>();
    for_rows(B, 4 * H, [&](int64_t b) {
      const T *gr = pg + b * 4 * H, *cpr = pc + b * H;
      T *s = ps + b * 5 * H, *h = py + b * 2 * H, *c = h + H;
      activate(gr, s, 2 * H, false);              // i, f
      activate(gr + 2 * H, s + 2 * H, H, true);   // g
      activate(gr + 3 * H, s + 3 * H, H, false);  // o
      for (int64_t j = 0; j < H; ++j) c[j] = s[H + j] * cpr[j] + s[j] * s[2 * H + j];
      activate(c, s + 4 * H, H, true);  // tanh(c)
      for (int64_t j = 0; j < H; ++j) h[j] = s[3 * H + j] * s[4 * H + j];
    });
  });
  return y;
}

Var cosine_similarity(Var keys, Var memory, double eps) {
  MG_CHECK(keys.defined() && memory.defined(), "cosine_similarity: undefined input");
  MG_CHECK(keys.shape().rank == 3 && memory.shape().rank == 3,
           "cosine_similarity: keys [B, R, W] and memory [B, N, W] must have rank 3, got ",
           keys.shape(), " and ", memory.shape());
  MG_CHECK(keys.dim(0) == memory.dim(0) && keys.dim(2) == memory.dim(2),
           "cosine_similarity: keys [B, R, W] and memory [B, N, W] disagree on B or W: ",
           keys.shape(), " and ", memory.shape());
  return bmm(normalize(keys, eps), normalize(memory, eps), false, true);
}

}  // namespace memgrad

// ---------------------------------------------------------------- gradient-check cases
namespace memgrad {
namespace {

// Whole class numbers in [0, classes), as float64.
Tensor random_targets(Rng& r, const Shape& shape, int64_t classes) {
  Tensor t = Tensor::empty(shape, DType::f64);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, double(r.below(uint64_t(classes))));
  return t;
}

// 0/1 mask with zeros exactly at the listed flat positions.
Tensor mask_with_zeros(const Shape& shape, std::initializer_list<int64_t> zeros) {
  Tensor m = Tensor::full(shape, DType::f64, 1.0);
  for (int64_t z : zeros) m.set(z, 0.0);
  return m;
}

using Unary = Var (*)(Var);

const bool kNnCases = [] {
  // softmax / log_softmax: inputs over a wide range (-5..5), folded ranks, batch 1, one class.
  for (const auto& [op, f] : {std::pair<const char*, Unary>{"softmax", softmax},
                              std::pair<const char*, Unary>{"log_softmax", log_softmax}}) {
    for (const Shape& s : {Shape{3, 5}, Shape{1, 4}, Shape{2, 3, 4}, Shape{6}, Shape{2, 1}}) {
      register_grad_case(
          {.op = op,
           .name = std::string(op) + "/" + s.str(),
           .make_inputs =
               [s](Rng& r) { return std::vector<GradInput>{{random_tensor(r, s, -5, 5)}}; },
           .build = [f](Tape&, std::span<const Var> v) { return f(v[0]); },
           .note = "inputs in [-5, 5); a one-class row has gradient 0"});
    }
  }

  // cross_entropy: targets (and mask) are data. Masked positions carry out-of-range targets (-1,
  // padding) to show they are never read.
  struct CeCase {
    const char* label;
    Shape logits;
    std::vector<int64_t> masked;  // flat positions of zeros in the mask
    bool use_mask;
  };
  for (const CeCase& c :
       {CeCase{"no-mask", {4, 5}, {}, false}, CeCase{"batch1", {1, 3}, {}, false},
        CeCase{"masked", {5, 4}, {1, 3}, true}, CeCase{"masked-BT", {2, 3, 4}, {0, 4, 5}, true},
        CeCase{"masked-batch1", {1, 2, 3}, {1}, true},
        CeCase{"all-masked", {2, 3}, {0, 1}, true}}) {
    register_grad_case(
        {.op = "cross_entropy",
         .name = std::string("cross_entropy/") + c.label,
         .make_inputs =
             [c](Rng& r) {
               const Shape rows = Shape::of(c.logits.dims.data(), c.logits.rank - 1);
               Tensor targets = random_targets(r, rows, c.logits[-1]);
               Tensor mask = Tensor::full(rows, DType::f64, 1.0);
               for (int64_t z : c.masked) {
                 mask.set(z, 0.0);
                 targets.set(z, -1.0);
               }
               std::vector<GradInput> in{{random_tensor(r, c.logits, -3, 3)}, {targets, false}};
               if (c.use_mask) in.push_back({mask, false});
               return in;
             },
         .build =
             [](Tape&, std::span<const Var> v) {
               return cross_entropy(v[0], v[1], v.size() > 2 ? v[2] : Var{});
             },
         .note = "targets and mask are data; masked positions hold target -1 (never read); "
                 "all-masked: loss 0 with gradient 0"});
  }

  // bce_with_logits: hard and soft targets, no mask, per-element mask, per-row mask, batch 1.
  struct BceCase {
    const char* label;
    Shape logits;
    int mask_kind;  // 0 none, 1 per element, 2 per row
    bool soft;
  };
  for (const BceCase& c :
       {BceCase{"no-mask", {3, 4}, 0, false}, BceCase{"soft-targets", {2, 5}, 0, true},
        BceCase{"batch1", {1, 5}, 0, false}, BceCase{"element-mask", {3, 4}, 1, false},
        BceCase{"row-mask", {2, 3, 4}, 2, false},
        BceCase{"element-mask-batch1", {1, 4}, 1, true}}) {
    register_grad_case(
        {.op = "bce_with_logits",
         .name = std::string("bce_with_logits/") + c.label,
         .make_inputs =
             [c](Rng& r) {
               Tensor targets =
                   c.soft ? random_tensor(r, c.logits, 0, 1) : random_targets(r, c.logits, 2);
               std::vector<GradInput> in{{random_tensor(r, c.logits, -4, 4)}, {targets, false}};
               if (c.mask_kind == 1) in.push_back({mask_with_zeros(c.logits, {0, 2}), false});
               if (c.mask_kind == 2)
                 in.push_back(
                     {mask_with_zeros(Shape::of(c.logits.dims.data(), c.logits.rank - 1), {1, 4}),
                      false});
               return in;
             },
         .build =
             [](Tape&, std::span<const Var> v) {
               return bce_with_logits(v[0], v[1], v.size() > 2 ? v[2] : Var{});
             },
         .note = "targets and mask are data; the loss is smooth (softplus form) everywhere"});
  }

  // normalize: rows of width >= 3 drawn from [-1, 1) (norms well away from 0).
  for (const Shape& s : {Shape{3, 4}, Shape{1, 5}, Shape{2, 3, 4}}) {
    register_grad_case(
        {.op = "normalize",
         .name = "normalize/" + s.str(),
         .make_inputs = [s](Rng& r) { return std::vector<GradInput>{{random_tensor(r, s)}}; },
         .build = [](Tape&, std::span<const Var> v) { return normalize(v[0]); },
         .note = "eps = 1e-6 inside the square root"});
  }

  // l2_norm: the same shapes, and rows of one element.
  for (const Shape& s : {Shape{3, 4}, Shape{1, 5}, Shape{2, 3, 4}, Shape{4, 1}}) {
    register_grad_case(
        {.op = "l2_norm",
         .name = "l2_norm/" + s.str(),
         .make_inputs = [s](Rng& r) { return std::vector<GradInput>{{random_tensor(r, s)}}; },
         .build = [](Tape&, std::span<const Var> v) { return l2_norm(v[0], 1e-6); },
         .note = "eps = 1e-6 inside the square root"});
  }

  // lstm_cell: gates of both signs and sizes, batch 1.
  for (const auto& [label, B, H] : {std::tuple{"B2-H3", 2, 3}, std::tuple{"batch1", 1, 2}}) {
    register_grad_case(
        {.op = "lstm_cell",
         .name = std::string("lstm_cell/") + label,
         .make_inputs =
             [B, H](Rng& r) {
               return std::vector<GradInput>{{random_tensor(r, Shape{B, 4 * H}, -2, 2)},
                                             {random_tensor(r, Shape{B, H}, -1, 1)}};
             },
         .build = [](Tape&, std::span<const Var> v) { return lstm_cell(v[0], v[1]); }});
  }

  // cosine_similarity: composite (normalize + bmm), registered under bmm.
  for (const auto& [label, ks, ms] : {std::tuple{"", Shape{2, 3, 4}, Shape{2, 5, 4}},
                                      std::tuple{"-batch1", Shape{1, 1, 3}, Shape{1, 4, 3}}}) {
    register_grad_case(
        {.op = "bmm",
         .name = std::string("bmm/cosine-similarity") + label,
         .make_inputs =
             [ks, ms](Rng& r) {
               return std::vector<GradInput>{{random_tensor(r, ks)}, {random_tensor(r, ms)}};
             },
         .build = [](Tape&, std::span<const Var> v) { return cosine_similarity(v[0], v[1]); },
         .note = "composite: normalize(keys), normalize(memory), bmm(.., .., "
                 "false, true)"});
  }
  return true;
}();

}  // namespace
}  // namespace memgrad
