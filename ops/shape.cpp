// Shape ops. Most view their tensors as [outer, n, inner] around one axis and move contiguous
// blocks of `inner` (or more) elements; backward moves the gradient the opposite way, adding.
#include "ops/shape.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "engine/gradcheck.hpp"
#include "engine/threads.hpp"

namespace memgrad {
namespace {

MG_OP(reshape);
MG_OP_READS(transpose, kReadsNothing);
MG_OP_READS(concat, kReadsNothing);
MG_OP_READS(slice, kReadsNothing);
MG_OP_READS(stack, kReadsNothing);
MG_OP_READS(gather_rows, reads_inputs({1}));
MG_OP_READS(scatter_add_rows, reads_inputs({1}));
MG_OP_READS(index_select, reads_inputs({1}));
MG_OP_READS(replace_rows, reads_inputs({1}));

// Product of dims [begin, end) of s.
int64_t prod(const Shape& s, int begin, int end) {
  int64_t p = 1;
  for (int i = begin; i < end; ++i) p *= s[i];
  return p;
}

int normalise_axis(const char* op, int axis, const Shape& s) {
  MG_CHECK(axis >= -s.rank && axis < s.rank, op, ": axis ", axis, " out of range for shape ", s);
  return axis < 0 ? axis + s.rank : axis;
}

// The flat position of the first element of p[0, n) that is not a whole number in [0, limit), or
// -1 when all are valid (NaN is invalid too).
template <class T>
int64_t first_bad_index(const T* p, int64_t n, int64_t limit) {
  for (int64_t i = 0; i < n; ++i) {
    const T v = p[i];
    if (!(v >= T(0) && double(v) < double(limit) && v == std::floor(v))) return i;
  }
  return -1;
}

// Throws unless every element of `indices` is a whole number in [0, limit).
void check_indices(const char* op, const char* what, const Tensor& indices, int64_t limit) {
  int64_t bad = -1;
  MG_DISPATCH(indices.dtype(), T, bad = first_bad_index(indices.data<T>(), indices.numel(), limit));
  if (bad >= 0)
    fail(op, ": ", what, " at position ", bad, " (of shape ", indices.shape(), ") is ",
         indices.at(bad), ", not a whole number in [0, ", limit, ")");
}

void check_same_tape_dtype(const char* op, Var a, Var b, const char* a_name, const char* b_name) {
  MG_CHECK(a.defined() && b.defined(), op, ": undefined input");
  MG_CHECK(a.tape == b.tape, op, ": ", a_name, " and ", b_name, " come from different tapes");
  MG_CHECK(a.dtype() == b.dtype(), op, ": ", a_name, " is ", dtype_name(a.dtype()), " but ", b_name,
           " is ", dtype_name(b.dtype()), " (indices travel in the data's dtype)");
}

// ---------------------------------------------------------------- reshape: a copy
void reshape_backward(Tape& tape, NodeId id) {
  const NodeId ix = tape.input_id(id, 0);
  if (tape.requires_grad(ix)) tape.pass_grad(id, ix);
}

// ---------------------------------------------------------------- transpose of the last two dims
void transpose_backward(Tape& tape, NodeId id) {
  const NodeId ix = tape.input_id(id, 0);
  if (!tape.requires_grad(ix)) return;
  const Shape& s = tape.value(ix).shape();
  const int64_t batch = prod(s, 0, s.rank - 2), m = s[-2], n = s[-1];
  MG_DISPATCH(tape.value(id).dtype(), T, {
    const T* g = tape.grad(id).data<T>();
    T* gx = tape.grad(ix).data<T>();
    for (int64_t b = 0; b < batch; ++b) {
      T* dst = gx + b * m * n;
      const T* src = g + b * m * n;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) dst[i * n + j] += src[j * m + i];
    }
  });
}

// ---------------------------------------------------------------- concat along ints[0]
void concat_backward(Tape& tape, NodeId id) {
  const int ax = int(tape.node(id).ints[0]);
  const Shape& out = tape.value(id).shape();
  const int64_t outer = prod(out, 0, ax), inner = prod(out, ax + 1, out.rank);
  const int64_t row = out[ax] * inner;
  const int num = tape.node(id).num_inputs;
  MG_DISPATCH(tape.value(id).dtype(), T, {
    const T* g = tape.grad(id).data<T>();
    int64_t off = 0;
    for (int k = 0; k < num; ++k) {
      const NodeId ik = tape.input_id(id, k);
      const int64_t len = tape.value(ik).shape()[ax] * inner;
      if (tape.requires_grad(ik)) {
        bool overwrite = false;  // input k's gradient is one block per outer index: all of it
        T* gx = tape.grad_for_write(ik, overwrite).data<T>();
        for (int64_t o = 0; o < outer; ++o) {
          T* dst = gx + o * len;
          const T* src = g + o * row + off;
          if (overwrite)
            std::copy_n(src, len, dst);
          else
            for (int64_t j = 0; j < len; ++j) dst[j] += src[j];
        }
      }
      off += len;
    }
  });
}

// ---------------------------------------------------------------- slice: ints = {axis, start}
void slice_backward(Tape& tape, NodeId id) {
  const NodeId ix = tape.input_id(id, 0);
  if (!tape.requires_grad(ix)) return;
  const int ax = int(tape.node(id).ints[0]);
  const int64_t start = tape.node(id).ints[1];
  const Shape& s = tape.value(ix).shape();
  const int64_t outer = prod(s, 0, ax), n = s[ax], inner = prod(s, ax + 1, s.rank);
  const int64_t len = tape.value(id).shape()[ax] * inner;
  MG_DISPATCH(tape.value(id).dtype(), T, {
    const T* g = tape.grad(id).data<T>();
    bool overwrite = false;
    T* gx = tape.grad_for_write(ix, overwrite).data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      T* row = gx + o * n * inner;
      const T* src = g + o * len;
      if (overwrite) {  // first contribution: the slice's part is copied, the rest zeroed
        std::fill_n(row, start * inner, T(0));
        std::copy_n(src, len, row + start * inner);
        std::fill_n(row + start * inner + len, (n - start) * inner - len, T(0));
      } else {
        T* dst = row + start * inner;
        for (int64_t j = 0; j < len; ++j) dst[j] += src[j];
      }
    }
  });
}

// ---------------------------------------------------------------- stack: new axis ints[0]
// Inputs viewed as [outer, inner] (split at the new axis), the output as [outer, K, inner].
void stack_backward(Tape& tape, NodeId id) {
  const int ax = int(tape.node(id).ints[0]);
  const int num = tape.node(id).num_inputs;
  const Shape& s = tape.value(tape.input_id(id, 0)).shape();
  const int64_t outer = prod(s, 0, ax), inner = prod(s, ax, s.rank);
  MG_DISPATCH(tape.value(id).dtype(), T, {
    const T* g = tape.grad(id).data<T>();
    for (int k = 0; k < num; ++k) {
      const NodeId ik = tape.input_id(id, k);
      if (!tape.requires_grad(ik)) continue;
      T* gx = tape.grad(ik).data<T>();
      for (int64_t o = 0; o < outer; ++o) {
        const T* src = g + (o * num + k) * inner;
        for (int64_t j = 0; j < inner; ++j) gx[o * inner + j] += src[j];
      }
    }
  });
}

// ---------------------------------------------------------------- gather_rows / scatter_add_rows
// gather_rows backward: dtable[idx[r]] += dout[r] for each looked-up row r, in order.
void gather_rows_backward(Tape& tape, NodeId id) {
  const NodeId it = tape.input_id(id, 0), ii = tape.input_id(id, 1);
  if (!tape.requires_grad(it)) return;
  const Tensor& table = tape.value(it);
  const int64_t d = table.numel() / table.dim(0);
  const Tensor& idx = tape.value(ii);
  MG_DISPATCH(tape.value(id).dtype(), T, {
    const T* pi = idx.data<T>();
    const T* g = tape.grad(id).data<T>();
    T* gt = tape.grad(it).data<T>();
    for (int64_t r = 0; r < idx.numel(); ++r) {
      T* dst = gt + int64_t(pi[r]) * d;
      const T* src = g + r * d;
      for (int64_t j = 0; j < d; ++j) dst[j] += src[j];
    }
  });
}

// scatter_add_rows backward: dsrc[i] += dout[idx[i]].
void scatter_add_rows_backward(Tape& tape, NodeId id) {
  const NodeId is = tape.input_id(id, 0), ii = tape.input_id(id, 1);
  if (!tape.requires_grad(is)) return;
  const int64_t d = tape.value(is).shape()[1];
  const Tensor& idx = tape.value(ii);
  MG_DISPATCH(tape.value(id).dtype(), T, {
    const T* pi = idx.data<T>();
    const T* g = tape.grad(id).data<T>();
    T* gs = tape.grad(is).data<T>();
    for (int64_t r = 0; r < idx.numel(); ++r) {
      const T* src = g + int64_t(pi[r]) * d;
      T* dst = gs + r * d;
      for (int64_t j = 0; j < d; ++j) dst[j] += src[j];
    }
  });
}

// ---------------------------------------------------------------- replace_rows
// replace_rows backward: dbase = dout with the replaced rows zeroed (their old values were
// overwritten), drows[i] = dout[idx[i]].
void replace_rows_backward(Tape& tape, NodeId id) {
  const NodeId ib = tape.input_id(id, 0), ii = tape.input_id(id, 1), ir = tape.input_id(id, 2);
  const Tensor& idx = tape.value(ii);
  const int64_t n = idx.numel(), rows = tape.value(id).dim(0);
  const int64_t d = tape.value(id).numel() / rows;
  MG_DISPATCH(tape.value(id).dtype(), T, {
    const T* pi = idx.data<T>();
    const T* g = tape.grad(id).data<T>();
    if (tape.requires_grad(ib)) {
      bool overwrite = false;
      T* gb = tape.grad_for_write(ib, overwrite).data<T>();
      // Rows between replaced ones pass the gradient through; replaced rows get none.
      int64_t next = 0;  // the next replaced row, in idx's increasing order
      for (int64_t r = 0; r < rows; ++r) {
        const bool replaced = next < n && int64_t(pi[next]) == r;
        if (replaced) ++next;
        T* dst = gb + r * d;
        const T* src = g + r * d;
        if (overwrite && replaced)
          std::fill_n(dst, d, T(0));
        else if (overwrite)
          std::copy_n(src, d, dst);
        else if (!replaced)
          for (int64_t j = 0; j < d; ++j) dst[j] += src[j];
      }
    }
    if (tape.requires_grad(ir)) {
      T* gr = tape.grad(ir).data<T>();
      for (int64_t i = 0; i < n; ++i) {
        const T* src = g + int64_t(pi[i]) * d;
        T* dst = gr + i * d;
        for (int64_t j = 0; j < d; ++j) dst[j] += src[j];
      }
    }
  });
}

// ---------------------------------------------------------------- index_select along axis 1
// dx[b, perm[b,k]] += dout[b, k]; samples write disjoint slices of dx, each in order of k.
void index_select_backward(Tape& tape, NodeId id) {
  const NodeId ix = tape.input_id(id, 0), ip = tape.input_id(id, 1);
  if (!tape.requires_grad(ix)) return;
  const Shape& s = tape.value(ix).shape();
  const int64_t batch = s[0], n = s[1], inner = prod(s, 2, s.rank);
  const int64_t k_count = tape.value(ip).shape()[1];
  MG_DISPATCH(tape.value(id).dtype(), T, {
    const T* pp = tape.value(ip).data<T>();
    const T* g = tape.grad(id).data<T>();
    T* gx = tape.grad(ix).data<T>();
    parallel_for_each(batch, [&](int64_t b) {
      for (int64_t k = 0; k < k_count; ++k) {
        T* dst = gx + (b * n + int64_t(pp[b * k_count + k])) * inner;
        const T* src = g + (b * k_count + k) * inner;
        for (int64_t j = 0; j < inner; ++j) dst[j] += src[j];
      }
    });
  });
}

}  // namespace

Var reshape(Var x, Shape shape) {
  MG_CHECK(x.defined(), "reshape: undefined input");
  MG_CHECK(shape.rank >= 1, "reshape: the target shape needs rank 1 to 4, got ", shape);
  MG_CHECK(shape.numel() == x.value().numel(), "reshape: cannot reshape ", x.shape(), " (",
           x.value().numel(), " elements) into ", shape, " (", shape.numel(), " elements)");
  return x.tape->record_view(kOp_reshape, x, shape, reshape_backward);  // no copy
}

Var transpose(Var x) {
  MG_CHECK(x.defined(), "transpose: undefined input");
  const Shape& s = x.shape();
  MG_CHECK(s.rank >= 2, "transpose: needs rank 2 to 4, got shape ", s);
  Shape out = s;
  std::swap(out[-1], out[-2]);
  const int64_t batch = prod(s, 0, s.rank - 2), m = s[-2], n = s[-1];
  Var y = x.tape->record(kOp_transpose, out, x.dtype(), {x}, transpose_backward);
  MG_DISPATCH(x.dtype(), T, {
    const T* px = x.value().data<T>();
    T* py = x.tape->value(y.id).data<T>();
    for (int64_t b = 0; b < batch; ++b) {
      const T* src = px + b * m * n;
      T* dst = py + b * m * n;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) dst[j * m + i] = src[i * n + j];
    }
  });
  return y;
}

Var concat(std::span<const Var> xs, int axis) {
  MG_CHECK(!xs.empty(), "concat: no inputs");
  for (size_t k = 0; k < xs.size(); ++k)
    MG_CHECK(xs[k].defined(), "concat: input ", k, " is undefined");
  const Shape& s0 = xs[0].shape();
  const int ax = normalise_axis("concat", axis, s0);
  Shape out = s0;
  out[ax] = 0;
  for (size_t k = 0; k < xs.size(); ++k) {
    const Shape& s = xs[k].shape();
    MG_CHECK(xs[k].dtype() == xs[0].dtype(), "concat: input ", k, " is ", dtype_name(xs[k].dtype()),
             " but input 0 is ", dtype_name(xs[0].dtype()));
    MG_CHECK(s.rank == s0.rank, "concat: input ", k, " has shape ", s, " but input 0 has shape ",
             s0, " (ranks differ)");
    for (int d = 0; d < s.rank; ++d)
      MG_CHECK(d == ax || s[d] == s0[d], "concat: input ", k, " of shape ", s,
               " differs from input 0 of shape ", s0, " in dim ", d, " (only axis ", ax,
               " may differ)");
    out[ax] += s[ax];
  }
  Tape* tape = xs[0].tape;
  Var y = tape->record(kOp_concat, out, xs[0].dtype(), xs, concat_backward);
  tape->node(y.id).ints[0] = ax;
  const int64_t outer = prod(out, 0, ax), inner = prod(out, ax + 1, out.rank);
  const int64_t row = out[ax] * inner;
  MG_DISPATCH(xs[0].dtype(), T, {
    T* py = tape->value(y.id).data<T>();
    int64_t off = 0;
    for (const Var& x : xs) {
      const T* px = x.value().data<T>();
      const int64_t len = x.shape()[ax] * inner;
      for (int64_t o = 0; o < outer; ++o) std::copy_n(px + o * len, len, py + o * row + off);
      off += len;
    }
  });
  return y;
}

Var concat(std::initializer_list<Var> xs, int axis) {
  return concat(std::span<const Var>(xs.begin(), xs.size()), axis);
}

Var slice(Var x, int axis, int64_t start, int64_t length) {
  MG_CHECK(x.defined(), "slice: undefined input");
  const Shape& s = x.shape();
  const int ax = normalise_axis("slice", axis, s);
  MG_CHECK(start >= 0 && length >= 0 && start + length <= s[ax], "slice: range [", start, ", ",
           start + length, ") out of bounds for axis ", axis, " (size ", s[ax], ") of shape ", s);
  Shape out = s;
  out[ax] = length;
  const int64_t outer = prod(s, 0, ax), n = s[ax], inner = prod(s, ax + 1, s.rank);
  if (outer == 1 && start == 0) {  // x's leading elements: a view, no copy
    Var y = x.tape->record_view(kOp_slice, x, out, slice_backward);
    x.tape->node(y.id).ints = {ax, start, 0, 0};
    return y;
  }
  Var y = x.tape->record(kOp_slice, out, x.dtype(), {x}, slice_backward);
  x.tape->node(y.id).ints = {ax, start, 0, 0};
  const int64_t len = length * inner;
  MG_DISPATCH(x.dtype(), T, {
    const T* px = x.value().data<T>();
    T* py = x.tape->value(y.id).data<T>();
    for (int64_t o = 0; o < outer; ++o)
      std::copy_n(px + (o * n + start) * inner, len, py + o * len);
  });
  return y;
}

Var stack(std::span<const Var> xs, int axis) {
  MG_CHECK(!xs.empty(), "stack: no inputs");
  for (size_t k = 0; k < xs.size(); ++k)
    MG_CHECK(xs[k].defined(), "stack: input ", k, " is undefined");
  const Shape& s0 = xs[0].shape();
  const int r = s0.rank;
  MG_CHECK(r + 1 <= Shape::kMaxRank, "stack: inputs of shape ", s0, " would give a result of rank ",
           r + 1, " (the maximum is 4)");
  MG_CHECK(axis >= -(r + 1) && axis <= r, "stack: axis ", axis,
           " out of range for stacking inputs of shape ", s0, " (valid: ", -(r + 1), " to ", r,
           ")");
  const int ax = axis < 0 ? axis + r + 1 : axis;
  for (size_t k = 0; k < xs.size(); ++k) {
    MG_CHECK(xs[k].dtype() == xs[0].dtype(), "stack: input ", k, " is ", dtype_name(xs[k].dtype()),
             " but input 0 is ", dtype_name(xs[0].dtype()));
    MG_CHECK(xs[k].shape() == s0, "stack: input ", k, " has shape ", xs[k].shape(),
             " but input 0 has shape ", s0, " (all must match)");
  }
  const int64_t num = int64_t(xs.size());
  Shape out;
  out.rank = r + 1;
  for (int i = 0, j = 0; i < r + 1; ++i) out[i] = i == ax ? num : s0[j++];
  Tape* tape = xs[0].tape;
  Var y = tape->record(kOp_stack, out, xs[0].dtype(), xs, stack_backward);
  tape->node(y.id).ints[0] = ax;
  const int64_t outer = prod(s0, 0, ax), inner = prod(s0, ax, r);
  MG_DISPATCH(xs[0].dtype(), T, {
    T* py = tape->value(y.id).data<T>();
    for (int64_t k = 0; k < num; ++k) {
      const T* px = xs[size_t(k)].value().data<T>();
      for (int64_t o = 0; o < outer; ++o)
        std::copy_n(px + o * inner, inner, py + (o * num + k) * inner);
    }
  });
  return y;
}

Var stack(std::initializer_list<Var> xs, int axis) {
  return stack(std::span<const Var>(xs.begin(), xs.size()), axis);
}

Var gather_rows(Var table, Var indices) {
  check_same_tape_dtype("gather_rows", table, indices, "table", "indices");
  const Shape &ts = table.shape(), &is = indices.shape();
  MG_CHECK(ts.rank >= 2, "gather_rows: the table must be [V, D, ...] (rank 2 to 4), got shape ",
           ts);
  MG_CHECK(is.rank >= 1 && is.rank + ts.rank - 1 <= Shape::kMaxRank,
           "gather_rows: indices of shape ", is, " and a table of shape ", ts,
           " give a result of rank ", is.rank + ts.rank - 1, " (at most ", Shape::kMaxRank, ")");
  const int64_t v = ts[0], d = prod(ts, 1, ts.rank);
  check_indices("gather_rows", "index", indices.value(), v);
  Shape out = is;
  out.rank = is.rank + ts.rank - 1;
  for (int k = 1; k < ts.rank; ++k) out[is.rank + k - 1] = ts[k];
  Var y = table.tape->record(kOp_gather_rows, out, table.dtype(), {table, indices},
                             gather_rows_backward);
  MG_DISPATCH(table.dtype(), T, {
    const T *pt = table.value().data<T>(), *pi = indices.value().data<T>();
    T* py = table.tape->value(y.id).data<T>();
    const int64_t rows = indices.value().numel();
    for (int64_t r = 0; r < rows; ++r) std::copy_n(pt + int64_t(pi[r]) * d, d, py + r * d);
  });
  return y;
}

Var scatter_add_rows(Var src, Var indices, int64_t num_rows) {
  check_same_tape_dtype("scatter_add_rows", src, indices, "src", "indices");
  const Shape &ss = src.shape(), &is = indices.shape();
  MG_CHECK(ss.rank == 2, "scatter_add_rows: src must be [N, D], got shape ", ss);
  MG_CHECK(is.rank == 1 && is[0] == ss[0], "scatter_add_rows: indices of shape ", is,
           " must be [N] for src of shape ", ss);
  MG_CHECK(num_rows >= 0, "scatter_add_rows: negative num_rows ", num_rows);
  check_indices("scatter_add_rows", "index", indices.value(), num_rows);
  const int64_t d = ss[1];
  Var y = src.tape->record(kOp_scatter_add_rows, Shape{num_rows, d}, src.dtype(), {src, indices},
                           scatter_add_rows_backward);
  MG_DISPATCH(src.dtype(), T, {
    const T *ps = src.value().data<T>(), *pi = indices.value().data<T>();
    T* py = src.tape->value(y.id).data<T>();
    std::fill_n(py, num_rows * d, T(0));
    for (int64_t r = 0; r < ss[0]; ++r) {
      T* dst = py + int64_t(pi[r]) * d;
      const T* row = ps + r * d;
      for (int64_t j = 0; j < d; ++j) dst[j] += row[j];
    }
  });
  return y;
}

Var replace_rows(Var base, Var indices, Var rows) {
  check_same_tape_dtype("replace_rows", base, indices, "base", "indices");
  check_same_tape_dtype("replace_rows", base, rows, "base", "rows");
  const Shape &bs = base.shape(), &is = indices.shape(), &rs = rows.shape();
  MG_CHECK(bs.rank >= 1, "replace_rows: base must have rank 1 to 4, got shape ", bs);
  MG_CHECK(is.rank == 1 && is[0] == rs[0], "replace_rows: indices of shape ", is,
           " must be [n] for rows of shape ", rs);
  Shape want = bs;
  want[0] = rs[0];
  MG_CHECK(rs == want, "replace_rows: rows of shape ", rs, " must be ", want, " for base of shape ",
           bs);
  check_indices("replace_rows", "index", indices.value(), bs[0]);
  const Tensor& iv = indices.value();
  for (int64_t i = 1; i < iv.numel(); ++i)
    MG_CHECK(iv.at(i) > iv.at(i - 1), "replace_rows: indices must be strictly increasing, but ",
             "position ", i, " holds ", iv.at(i), " after ", iv.at(i - 1));
  const int64_t n = is[0], d = prod(bs, 1, bs.rank);
  Var y = base.tape->record(kOp_replace_rows, bs, base.dtype(), {base, indices, rows},
                            replace_rows_backward);
  MG_DISPATCH(base.dtype(), T, {
    const T *pb = base.value().data<T>(), *pi = iv.data<T>(), *pr = rows.value().data<T>();
    T* py = base.tape->value(y.id).data<T>();
    std::copy_n(pb, bs.numel(), py);
    for (int64_t i = 0; i < n; ++i) std::copy_n(pr + i * d, d, py + int64_t(pi[i]) * d);
  });
  return y;
}

Var index_select(Var x, Var perm) {
  check_same_tape_dtype("index_select", x, perm, "x", "perm");
  const Shape &xs = x.shape(), &ps = perm.shape();
  MG_CHECK(xs.rank >= 2, "index_select: x must be [B, N, ...] (rank 2 to 4), got shape ", xs);
  MG_CHECK(ps.rank == 2 && ps[0] == xs[0], "index_select: perm of shape ", ps,
           " must be [B, K] with B = ", xs[0], " for x of shape ", xs);
  const int64_t batch = xs[0], n = xs[1], k_count = ps[1], inner = prod(xs, 2, xs.rank);
  check_indices("index_select", "perm entry", perm.value(), n);
  Shape out = xs;
  out[1] = k_count;
  Var y = x.tape->record(kOp_index_select, out, x.dtype(), {x, perm}, index_select_backward);
  MG_DISPATCH(x.dtype(), T, {
    const T *px = x.value().data<T>(), *pp = perm.value().data<T>();
    T* py = x.tape->value(y.id).data<T>();
    parallel_for_each(batch, [&](int64_t b) {
      for (int64_t k = 0; k < k_count; ++k)
        std::copy_n(px + (b * n + int64_t(pp[b * k_count + k])) * inner, inner,
                    py + (b * k_count + k) * inner);
    });
  });
  return y;
}

}  // namespace memgrad

// ---------------------------------------------------------------- gradient-check cases
namespace memgrad {
namespace {

// Whole numbers drawn uniformly from [0, limit), as float64 data.
Tensor random_indices(Rng& r, const Shape& s, int64_t limit) {
  Tensor t = Tensor::empty(s, DType::f64);
  double* p = t.data<double>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = double(r.below(uint64_t(limit)));
  return t;
}

// Random indices whose last element repeats the first: gradients must accumulate.
Tensor repeating_indices(Rng& r, const Shape& s, int64_t limit) {
  Tensor t = random_indices(r, s, limit);
  t.set(t.numel() - 1, t.at(0));
  return t;
}

// [B, N]: each row a random permutation of 0..N-1.
Tensor row_permutations(Rng& r, int64_t batch, int64_t n) {
  Tensor t = Tensor::empty(Shape{batch, n}, DType::f64);
  double* p = t.data<double>();
  for (int64_t b = 0; b < batch; ++b) {
    double* row = p + b * n;
    for (int64_t i = 0; i < n; ++i) row[i] = double(i);
    for (int64_t i = n - 1; i > 0; --i) std::swap(row[i], row[int64_t(r.below(uint64_t(i + 1)))]);
  }
  return t;
}

GraphBuilder one(Var (*f)(Var)) {
  return [f](Tape&, std::span<const Var> v) { return f(v[0]); };
}

// Inputs of the given shapes, all differentiable, uniform in [-1, 1).
std::function<std::vector<GradInput>(Rng&)> inputs_of(std::vector<Shape> shapes) {
  return [shapes](Rng& r) {
    std::vector<GradInput> in;
    for (const Shape& s : shapes) in.push_back({random_tensor(r, s)});
    return in;
  };
}

const bool kShapeCases = [] {
  for (const auto& [from, to] :
       {std::pair{Shape{2, 3, 4}, Shape{6, 4}}, std::pair{Shape{1, 6}, Shape{2, 3}},
        std::pair{Shape{12}, Shape{3, 2, 2}}, std::pair{Shape{2, 2, 3}, Shape{1, 2, 3, 2}}}) {
    register_grad_case(
        {.op = "reshape",
         .name = "reshape/" + from.str() + "->" + to.str(),
         .make_inputs = inputs_of({from}),
         .build = [to](Tape&, std::span<const Var> v) { return reshape(v[0], to); }});
  }
  for (const Shape& s : {Shape{3, 4}, Shape{1, 5}, Shape{2, 3, 4}, Shape{1, 2, 3, 2}})
    register_grad_case({.op = "transpose",
                        .name = "transpose/" + s.str(),
                        .make_inputs = inputs_of({s}),
                        .build = one(transpose)});

  struct MultiCase {
    const char* label;
    std::vector<Shape> shapes;
    int axis;
  };
  const MultiCase concat_cases[] = {{"2-inputs/axis0", {{2, 3}, {4, 3}}, 0},
                                    {"2-inputs/axis-1", {{2, 3, 2}, {2, 3, 4}}, -1},
                                    {"3-inputs/axis1", {{2, 1, 3}, {2, 2, 3}, {2, 3, 3}}, 1},
                                    {"3-inputs/batch1", {{1, 2}, {1, 3}, {1, 1}}, 1},
                                    {"2-inputs/rank4-axis2", {{1, 2, 2, 2}, {1, 2, 1, 2}}, 2}};
  for (const MultiCase& c : concat_cases)
    register_grad_case(
        {.op = "concat",
         .name = std::string("concat/") + c.label,
         .make_inputs = inputs_of(c.shapes),
         .build = [axis = c.axis](Tape&, std::span<const Var> v) { return concat(v, axis); }});
  const MultiCase stack_cases[] = {{"2-inputs/axis0", {{3, 4}, {3, 4}}, 0},
                                   {"3-inputs/axis1", {{2, 3}, {2, 3}, {2, 3}}, 1},
                                   {"2-inputs/axis-1", {{2, 3}, {2, 3}}, -1},
                                   {"3-inputs/batch1", {{1, 3}, {1, 3}, {1, 3}}, 0},
                                   {"2-inputs/rank3-axis2", {{2, 2, 3}, {2, 2, 3}}, 2}};
  for (const MultiCase& c : stack_cases)
    register_grad_case(
        {.op = "stack",
         .name = std::string("stack/") + c.label,
         .make_inputs = inputs_of(c.shapes),
         .build = [axis = c.axis](Tape&, std::span<const Var> v) { return stack(v, axis); }});

  struct SliceCase {
    Shape shape;
    int axis;
    int64_t start, length;
  };
  // The last two are leading blocks (views).
  for (const SliceCase& c :
       {SliceCase{{4, 5}, 1, 1, 3}, SliceCase{{3, 4, 2}, 0, 1, 2}, SliceCase{{1, 6}, -1, 2, 4},
        SliceCase{{2, 3, 4}, 2, 0, 1}, SliceCase{{4, 2, 3}, 0, 0, 3}, SliceCase{{1, 6}, 1, 0, 4}})
    register_grad_case({.op = "slice",
                        .name = "slice/" + c.shape.str() + "/axis" + std::to_string(c.axis) + "/" +
                                std::to_string(c.start) + "+" + std::to_string(c.length),
                        .make_inputs = inputs_of({c.shape}),
                        .build = [c](Tape&, std::span<const Var> v) {
                          return slice(v[0], c.axis, c.start, c.length);
                        }});

  constexpr const char* kIndexNote =
      "indices are data (whole numbers, not differentiated); the last repeats the first so "
      "gradients must accumulate";
  struct GatherCase {
    Shape table, indices;
  };
  for (const GatherCase& c :
       {GatherCase{{5, 3}, {7}}, GatherCase{{4, 2}, {2, 3}}, GatherCase{{6, 4}, {1, 1}},
        GatherCase{{3, 2}, {2, 2, 2}}, GatherCase{{4, 3, 2}, {3}}, GatherCase{{3, 2, 2, 2}, {2}}})
    register_grad_case(
        {.op = "gather_rows",
         .name = "gather_rows/" + c.table.str() + "/idx" + c.indices.str(),
         .make_inputs =
             [c](Rng& r) {
               return std::vector<GradInput>{{random_tensor(r, c.table)},
                                             {repeating_indices(r, c.indices, c.table[0]), false}};
             },
         .build = [](Tape&, std::span<const Var> v) { return gather_rows(v[0], v[1]); },
         .note = kIndexNote});

  struct ScatterCase {
    Shape src;
    int64_t rows;
  };
  for (const ScatterCase& c : {ScatterCase{{6, 3}, 4}, ScatterCase{{1, 2}, 3},
                               ScatterCase{{3, 4}, 5}, ScatterCase{{5, 1}, 2}})
    register_grad_case(
        {.op = "scatter_add_rows",
         .name = "scatter_add_rows/" + c.src.str() + "/rows" + std::to_string(c.rows),
         .make_inputs =
             [c](Rng& r) {
               return std::vector<GradInput>{
                   {random_tensor(r, c.src)},
                   {repeating_indices(r, Shape{c.src[0]}, c.rows), false}};
             },
         .build = [rows = c.rows](
                      Tape&, std::span<const Var> v) { return scatter_add_rows(v[0], v[1], rows); },
         .note = kIndexNote});

  struct ReplaceCase {
    Shape base;
    std::vector<double> indices;  // strictly increasing
  };
  for (const ReplaceCase& c :
       {ReplaceCase{{5, 3}, {0, 2, 3}}, ReplaceCase{{4, 2, 3}, {1, 3}}, ReplaceCase{{3, 2}, {1}},
        ReplaceCase{{3, 2, 2, 2}, {0, 1, 2}}, ReplaceCase{{6}, {5}}})
    register_grad_case(
        {.op = "replace_rows",
         .name = "replace_rows/" + c.base.str() + "/" + std::to_string(c.indices.size()) + "-rows",
         .make_inputs =
             [c](Rng& r) {
               Shape rows = c.base;
               rows[0] = int64_t(c.indices.size());
               return std::vector<GradInput>{
                   {random_tensor(r, c.base)},
                   {Tensor::from(Shape{rows[0]}, DType::f64, c.indices), false},
                   {random_tensor(r, rows)}};
             },
         .build = [](Tape&, std::span<const Var> v) { return replace_rows(v[0], v[1], v[2]); },
         .note = "indices are data (strictly increasing whole numbers, not differentiated)"});

  struct SelectCase {
    const char* label;
    Shape x;
    int64_t k;
    bool permutation;  // true: each row of perm is a permutation of 0..N-1 (k == N)
  };
  for (const SelectCase& c :
       {SelectCase{"permutation", {2, 4, 3}, 4, true},
        SelectCase{"permutation-batch1", {1, 5}, 5, true}, SelectCase{"repeats", {3, 5}, 6, false},
        SelectCase{"repeats-rank4", {1, 4, 2, 2}, 3, false},
        SelectCase{"subset", {2, 3, 2}, 2, false}})
    register_grad_case(
        {.op = "index_select",
         .name = std::string("index_select/") + c.label + "/" + c.x.str(),
         .make_inputs =
             [c](Rng& r) {
               Tensor perm = c.permutation ? row_permutations(r, c.x[0], c.x[1])
                                           : random_indices(r, Shape{c.x[0], c.k}, c.x[1]);
               if (!c.permutation && c.k > 1) perm.set(1, perm.at(0));  // a repeat
               return std::vector<GradInput>{{random_tensor(r, c.x)}, {perm, false}};
             },
         .build = [](Tape&, std::span<const Var> v) { return index_select(v[0], v[1]); },
         .note = "perm is data (whole numbers, not differentiated); non-permutation "
                 "cases repeat an index so gradients must accumulate"});
  return true;
}();

}  // namespace
}  // namespace memgrad
