// Memory-addressing helpers: cumprod_exclusive, sort / argsort, gather_last, scatter_last.
#include "ops/memory.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "engine/gradcheck.hpp"
#include "ops/elementwise.hpp"

namespace memgrad {
namespace {

MG_OP(cumprod_exclusive);
MG_OP_READS(sort, kReadsNothing);
MG_OP_READS(gather_last, reads_inputs({1}));
MG_OP_READS(scatter_last, reads_inputs({1}));
// argsort's output is data (a permutation) with no gradient: a leaf OpDef, like detach. It has no
// backward, so it needs no gradient-check case.
const OpDef kArgsort{"argsort", /*is_leaf=*/true};

// Largest last-axis length whose indices are exact in the float dtype (2^24 for float32).
int64_t max_index_count(DType t) {
  return t == DType::f32 ? (int64_t(1) << 24) : (int64_t(1) << 53);
}

// ---------------------------------------------------------------- cumprod_exclusive
// x is viewed as [outer, n, inner] around the axis; element (o, i, k) sits at (o * n + i) * inner +
// k. ints = {outer, n, inner}.
//
// Backward without division: with P_i = out_i = prod_{k<i} x_k,
//   dL/dx_j = sum_{i>j} g_i prod_{k<i, k!=j} x_k = P_j * S_j,
//   S_j = sum_{i>j} g_i prod_{j<k<i} x_k,   S_{n-1} = 0,   S_{j-1} = g_j + x_j * S_j,
// so one reverse sweep per row computes every gradient in O(n), exact where x has zeros.
void cumprod_exclusive_backward(Tape& tape, NodeId id) {
  const NodeId ix = tape.input_id(id, 0);
  if (!tape.requires_grad(ix)) return;
  const Node& nd = tape.node(id);
  const int64_t outer = nd.ints[0], n = nd.ints[1], inner = nd.ints[2];
  const Tensor &x = tape.value(ix), &y = tape.value(id);
  MG_DISPATCH(y.dtype(), T, {
    const T *px = x.data<T>(), *py = y.data<T>(), *g = tape.grad(id).data<T>();
    T* gx = tape.grad(ix).data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < inner; ++k) {
        const int64_t base = o * n * inner + k;
        T s = T(0);
        for (int64_t i = n - 1; i >= 0; --i) {
          const int64_t e = base + i * inner;
          gx[e] += py[e] * s;
          s = g[e] + px[e] * s;
        }
      }
  });
}

}  // namespace

Var cumprod_exclusive(Var x, int axis) {
  MG_CHECK(x.defined(), "cumprod_exclusive: undefined input");
  const Shape& s = x.shape();
  MG_CHECK(s.rank >= 1, "cumprod_exclusive: input of shape ", s, " has no axis");
  MG_CHECK(axis >= -s.rank && axis < s.rank, "cumprod_exclusive: axis ", axis,
           " out of range for shape ", s);
  const int ax = axis < 0 ? axis + s.rank : axis;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < ax; ++d) outer *= s[d];
  for (int d = ax + 1; d < s.rank; ++d) inner *= s[d];
  const int64_t n = s[ax];
  Var y = x.tape->record(kOp_cumprod_exclusive, s, x.dtype(), {x}, cumprod_exclusive_backward);
  x.tape->node(y.id).ints = {outer, n, inner, 0};
  MG_DISPATCH(x.dtype(), T, {
    const T* px = x.value().data<T>();
    T* py = x.tape->value(y.id).data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < inner; ++k) {
        const int64_t base = o * n * inner + k;
        T p = T(1);
        for (int64_t i = 0; i < n; ++i) {
          const int64_t e = base + i * inner;
          py[e] = p;
          p *= px[e];
        }
      }
  });
  return y;
}

namespace {

// ---------------------------------------------------------------- sort / argsort
// Rows and row length of a last-axis op, after checking the input has a non-empty last axis.
void last_axis_rows(const char* op, const Shape& s, int64_t& rows, int64_t& n) {
  MG_CHECK(s.rank >= 1, op, ": input of shape ", s, " has no last axis");
  n = s[-1];
  MG_CHECK(n > 0, op, ": empty last axis in shape ", s);
  rows = s.numel() / n;
}

void check_no_nan(const char* op, const Tensor& x) {
  MG_DISPATCH(x.dtype(), T, {
    const T* p = x.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i)
      MG_CHECK(!std::isnan(p[i]), op, ": NaN at position ", i, " of the input of shape ", x.shape(),
               " (NaN has no order)");
  });
}

// Writes into perm, row by row, the stable sorting permutation of each row of x. Indices are
// stored as whole numbers of type I. std::sort with ties broken by index gives exactly the stable
// order, in place, without the temporary buffer std::stable_sort would allocate.
template <class T, class I>
void sort_permutation(const T* x, I* perm, int64_t rows, int64_t n, bool descending) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * n;
    I* pr = perm + r * n;
    for (int64_t k = 0; k < n; ++k) pr[k] = I(k);
    if (descending)
      std::sort(pr, pr + n, [xr](I a, I b) {
        const T va = xr[int64_t(a)], vb = xr[int64_t(b)];
        return va > vb || (va == vb && a < b);
      });
    else
      std::sort(pr, pr + n, [xr](I a, I b) {
        const T va = xr[int64_t(a)], vb = xr[int64_t(b)];
        return va < vb || (va == vb && a < b);
      });
  }
}

// The saved slot holds the permutation (float64 whole numbers, shape of x); ints = {rows, n}.
void sort_backward(Tape& tape, NodeId id) {
  const NodeId ix = tape.input_id(id, 0);
  if (!tape.requires_grad(ix)) return;
  const int64_t rows = tape.node(id).ints[0], n = tape.node(id).ints[1];
  const double* perm = tape.saved(id).data<double>();
  MG_DISPATCH(tape.value(id).dtype(), T, {
    const T* g = tape.grad(id).data<T>();
    T* gx = tape.grad(ix).data<T>();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < n; ++k) gx[r * n + int64_t(perm[r * n + k])] += g[r * n + k];
  });
}

}  // namespace

Var sort(Var x, bool descending) {
  MG_CHECK(x.defined(), "sort: undefined input");
  int64_t rows = 0, n = 0;
  last_axis_rows("sort", x.shape(), rows, n);
  check_no_nan("sort", x.value());
  Tape& tape = *x.tape;
  Var y = tape.record(kOp_sort, x.shape(), x.dtype(), {x}, sort_backward);
  tape.node(y.id).ints = {rows, n, descending ? 1 : 0, 0};
  double* perm = tape.make_saved(y.id, x.shape(), DType::f64).data<double>();
  MG_DISPATCH(x.dtype(), T, {
    const T* px = x.value().data<T>();
    T* py = tape.value(y.id).data<T>();
    sort_permutation(px, perm, rows, n, descending);
    for (int64_t i = 0; i < rows * n; ++i) py[i] = px[(i / n) * n + int64_t(perm[i])];
  });
  return y;
}

Var argsort(Var x, bool descending) {
  MG_CHECK(x.defined(), "argsort: undefined input");
  int64_t rows = 0, n = 0;
  last_axis_rows("argsort", x.shape(), rows, n);
  MG_CHECK(n <= max_index_count(x.dtype()), "argsort: last axis of length ", n,
           " has indices not exact in ", dtype_name(x.dtype()));
  check_no_nan("argsort", x.value());
  Tape& tape = *x.tape;
  Var y = tape.record(kArgsort, x.shape(), x.dtype(), {x}, nullptr);
  MG_DISPATCH(x.dtype(), T, {
    sort_permutation(x.value().data<T>(), tape.value(y.id).data<T>(), rows, n, descending);
  });
  return y;
}

namespace {

// ---------------------------------------------------------------- gather_last / scatter_last
// Checks that idx holds whole numbers in [0, n).
template <class T>
void check_indices(const char* op, const T* idx, const Shape& s, int64_t n) {
  for (int64_t i = 0; i < s.numel(); ++i) {
    const T v = idx[i];
    MG_CHECK(v >= T(0) && v < T(n) && v == std::floor(v), op, ": index ", v, " at position ", i,
             " of idx ", s, " is not a whole number in [0, ", n, ")");
  }
}

// gather_last: ints = {rows, n (x's last dim), m (idx's last dim)}.
void gather_last_backward(Tape& tape, NodeId id) {
  const NodeId ix = tape.input_id(id, 0), ii = tape.input_id(id, 1);
  if (!tape.requires_grad(ix)) return;
  const int64_t rows = tape.node(id).ints[0], n = tape.node(id).ints[1], m = tape.node(id).ints[2];
  MG_DISPATCH(tape.value(id).dtype(), T, {
    const T *idx = tape.value(ii).data<T>(), *g = tape.grad(id).data<T>();
    T* gx = tape.grad(ix).data<T>();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < m; ++k) gx[r * n + int64_t(idx[r * m + k])] += g[r * m + k];
  });
}

// scatter_last: ints = {rows, n}; out[r, idx[r, k]] = src[r, k], so dsrc[r, k] = g[r, idx[r, k]].
void scatter_last_backward(Tape& tape, NodeId id) {
  const NodeId is = tape.input_id(id, 0), ii = tape.input_id(id, 1);
  if (!tape.requires_grad(is)) return;
  const int64_t rows = tape.node(id).ints[0], n = tape.node(id).ints[1];
  MG_DISPATCH(tape.value(id).dtype(), T, {
    const T *idx = tape.value(ii).data<T>(), *g = tape.grad(id).data<T>();
    T* gs = tape.grad(is).data<T>();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < n; ++k) gs[r * n + k] += g[r * n + int64_t(idx[r * n + k])];
  });
}

// Checks that every row of idx (whole numbers in [0, n), already checked) is a permutation: n
// values in range with no repeat. A fixed stack bitset covers 4096 index values at a time, so long
// rows take several passes but nothing is allocated.
template <class T>
void check_permutation_rows(const char* op, const T* idx, int64_t rows, int64_t n) {
  constexpr int64_t kBlock = 4096;
  std::array<uint64_t, kBlock / 64> seen;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t lo = 0; lo < n; lo += kBlock) {
      seen.fill(0);
      for (int64_t k = 0; k < n; ++k) {
        const int64_t v = int64_t(idx[r * n + k]) - lo;
        if (v < 0 || v >= kBlock) continue;
        uint64_t& word = seen[size_t(v / 64)];
        const uint64_t bit = uint64_t(1) << (v % 64);
        MG_CHECK(!(word & bit), op, ": row ", r, " of idx is not a permutation: index ", v + lo,
                 " repeats at position ", k);
        word |= bit;
      }
    }
}

}  // namespace

Var gather_last(Var x, Var idx) {
  MG_CHECK(x.defined() && idx.defined() && x.tape == idx.tape,
           "gather_last: inputs undefined or from different tapes");
  MG_CHECK(x.dtype() == idx.dtype(), "gather_last: dtypes differ (", dtype_name(x.dtype()), " vs ",
           dtype_name(idx.dtype()), "): indices travel in the values' dtype");
  const Shape &xs = x.shape(), &is = idx.shape();
  bool same_lead = xs.rank >= 1 && xs.rank == is.rank;
  for (int d = 0; same_lead && d + 1 < xs.rank; ++d) same_lead = xs[d] == is[d];
  MG_CHECK(same_lead, "gather_last: x ", xs, " and idx ", is,
           " must have the same rank (>= 1) and the same leading dims");
  const int64_t n = xs[-1], m = is[-1];
  const int64_t rows = m > 0 ? is.numel() / m : 0;
  MG_DISPATCH(x.dtype(), T, { check_indices("gather_last", idx.value().data<T>(), is, n); });
  Tape& tape = *x.tape;
  Var y = tape.record(kOp_gather_last, is, x.dtype(), {x, idx}, gather_last_backward);
  tape.node(y.id).ints = {rows, n, m, 0};
  MG_DISPATCH(x.dtype(), T, {
    const T *px = x.value().data<T>(), *pi = idx.value().data<T>();
    T* py = tape.value(y.id).data<T>();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < m; ++k) py[r * m + k] = px[r * n + int64_t(pi[r * m + k])];
  });
  return y;
}

Var scatter_last(Var src, Var idx) {
  MG_CHECK(src.defined() && idx.defined() && src.tape == idx.tape,
           "scatter_last: inputs undefined or from different tapes");
  MG_CHECK(src.dtype() == idx.dtype(), "scatter_last: dtypes differ (", dtype_name(src.dtype()),
           " vs ", dtype_name(idx.dtype()), "): indices travel in the values' dtype");
  const Shape& s = src.shape();
  MG_CHECK(s.rank >= 1 && idx.shape() == s, "scatter_last: idx ", idx.shape(),
           " must have the shape of src ", s, " (rank >= 1)");
  const int64_t n = s[-1];
  const int64_t rows = n > 0 ? s.numel() / n : 0;
  MG_DISPATCH(src.dtype(), T, {
    const T* pi = idx.value().data<T>();
    check_indices("scatter_last", pi, s, n);
    check_permutation_rows("scatter_last", pi, rows, n);
  });
  Tape& tape = *src.tape;
  Var y = tape.record(kOp_scatter_last, s, src.dtype(), {src, idx}, scatter_last_backward);
  tape.node(y.id).ints = {rows, n, 0, 0};
  MG_DISPATCH(src.dtype(), T, {
    const T *ps = src.value().data<T>(), *pi = idx.value().data<T>();
    T* py = tape.value(y.id).data<T>();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < n; ++k) py[r * n + int64_t(pi[r * n + k])] = ps[r * n + k];
  });
  return y;
}

}  // namespace memgrad

// ---------------------------------------------------------------- gradient-check cases
namespace memgrad {
namespace {

// Rows (along the last axis) of distinct values in [lo, hi), every pair at least `gap` apart, so a
// central difference never swaps two sorted values (sort is not differentiable at ties).
Tensor distinct_rows(Rng& r, const Shape& s, double lo, double hi, double gap) {
  Tensor t = random_tensor(r, s, lo, hi);
  double* p = t.data<double>();
  const int64_t n = s[-1];
  for (int64_t row = 0; row < s.numel() / n; ++row) {
    double* v = p + row * n;
    for (bool ok = false; !ok;) {
      ok = true;
      for (int64_t i = 0; i < n && ok; ++i)
        for (int64_t j = i + 1; j < n && ok; ++j)
          if (std::fabs(v[i] - v[j]) < gap) ok = false;
      if (!ok)
        for (int64_t i = 0; i < n; ++i) v[i] = r.uniform(lo, hi);
    }
  }
  return t;
}

// Whole-number indices in [0, n), shape s (repeats allowed).
Tensor random_indices(Rng& r, const Shape& s, int64_t n) {
  Tensor t = Tensor::empty(s, DType::f64);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, double(r.below(uint64_t(n))));
  return t;
}

// A random permutation of 0..n-1 in every row (Fisher-Yates), shape s.
Tensor random_permutations(Rng& r, const Shape& s) {
  Tensor t = Tensor::empty(s, DType::f64);
  double* p = t.data<double>();
  const int64_t n = s[-1];
  for (int64_t row = 0; row < s.numel() / n; ++row) {
    double* v = p + row * n;
    for (int64_t k = 0; k < n; ++k) v[k] = double(k);
    for (int64_t k = n - 1; k > 0; --k) std::swap(v[k], v[int64_t(r.below(uint64_t(k + 1)))]);
  }
  return t;
}

const bool kMemoryCases = [] {
  // cumprod_exclusive: plain random inputs on several axes and shapes.
  for (const auto& [label, s, axis] :
       {std::tuple{"last", Shape{3, 5}, -1}, std::tuple{"batch1", Shape{1, 6}, -1},
        std::tuple{"middle-axis", Shape{2, 4, 3}, 1}, std::tuple{"first-axis", Shape{4, 3}, 0},
        std::tuple{"rank4", Shape{1, 2, 2, 4}, 3}}) {
    register_grad_case(
        {.op = "cumprod_exclusive",
         .name = std::string("cumprod_exclusive/") + label,
         .make_inputs =
             [s](Rng& r) { return std::vector<GradInput>{{random_tensor(r, s, -1.5, 1.5)}}; },
         .build = [axis](Tape&, std::span<const Var> v) { return cumprod_exclusive(v[0], axis); },
         .note = "multilinear in each x_j: central differences are exact"});
  }
  // Exact zeros and ones: a backward that divided by x would give NaN or Inf here.
  register_grad_case(
      {.op = "cumprod_exclusive",
       .name = "cumprod_exclusive/zeros-and-ones",
       .make_inputs =
           [](Rng& r) {
             Tensor t = random_tensor(r, Shape{4, 6}, 0.1, 0.9);
             const double rows[4][6] = {{0.5, 0.0, 1.0, 0.7, 0.3, 0.8},   // one zero in the middle
                                        {0.0, 0.6, 0.0, 1.0, 0.4, 0.9},   // two zeros
                                        {1.0, 1.0, 0.0, 1.0, 1.0, 0.2},   // ones around a zero
                                        {0.0, 0.0, 0.0, 0.0, 1.0, 0.0}};  // almost all zeros
             for (int i = 0; i < 4; ++i)
               for (int j = 0; j < 6; ++j) t.set(i * 6 + j, rows[i][j]);
             return std::vector<GradInput>{{t}};
           },
       .build = [](Tape&, std::span<const Var> v) { return cumprod_exclusive(v[0]); },
       .note = "rows with exact 0s and 1s (DNC usage): finite, exact gradients without division"});
  register_grad_case(
      {.op = "cumprod_exclusive",
       .name = "cumprod_exclusive/batch1-zero-axis0",
       .make_inputs =
           [](Rng& r) {
             Tensor t = random_tensor(r, Shape{5, 1}, -1, 1);
             t.set(2, 0.0);
             t.set(4, 1.0);
             return std::vector<GradInput>{{t}};
           },
       .build = [](Tape&, std::span<const Var> v) { return cumprod_exclusive(v[0], 0); },
       .note = "a zero and a one along axis 0"});

  // sort: distinct values spaced at least 1e-3 apart.
  for (const auto& [label, s, desc] :
       {std::tuple{"ascending", Shape{3, 5}, false}, std::tuple{"descending", Shape{3, 5}, true},
        std::tuple{"batch1", Shape{1, 7}, false}, std::tuple{"rank3-desc", Shape{2, 3, 4}, true}}) {
    register_grad_case(
        {.op = "sort",
         .name = std::string("sort/") + label,
         .make_inputs =
             [s](Rng& r) { return std::vector<GradInput>{{distinct_rows(r, s, -1, 1, 1e-3)}}; },
         .build = [desc](Tape&, std::span<const Var> v) { return sort(v[0], desc); },
         .note = "row values distinct, >= 1e-3 apart (sort has kinks at ties)"});
  }

  // gather_last: indices with repeats, fewer or more than n.
  for (const auto& [label, xs, is] : {std::tuple{"fewer", Shape{3, 5}, Shape{3, 4}},
                                      std::tuple{"more-repeats", Shape{2, 3}, Shape{2, 7}},
                                      std::tuple{"batch1", Shape{1, 6}, Shape{1, 6}},
                                      std::tuple{"rank3", Shape{2, 2, 4}, Shape{2, 2, 3}}}) {
    register_grad_case(
        {.op = "gather_last",
         .name = std::string("gather_last/") + label,
         .make_inputs =
             [xs, is](Rng& r) {
               return std::vector<GradInput>{{random_tensor(r, xs)},
                                             {random_indices(r, is, xs[-1]), false}};
             },
         .build = [](Tape&, std::span<const Var> v) { return gather_last(v[0], v[1]); },
         .note = "indices are data; repeats exercise the scatter-add"});
  }

  // scatter_last: random permutations per row.
  for (const auto& [label, s] : {std::tuple{"2d", Shape{3, 5}}, std::tuple{"batch1", Shape{1, 4}},
                                 std::tuple{"rank3", Shape{2, 3, 4}}}) {
    register_grad_case(
        {.op = "scatter_last",
         .name = std::string("scatter_last/") + label,
         .make_inputs =
             [s](Rng& r) {
               return std::vector<GradInput>{{random_tensor(r, s)},
                                             {random_permutations(r, s), false}};
             },
         .build = [](Tape&, std::span<const Var> v) { return scatter_last(v[0], v[1]); },
         .note = "idx is data: a random permutation per row"});
  }
  // The DNC allocation weighting: sort usage ascending, a_sorted = (1 - u_sorted) * cumprod of
  // u_sorted, then put it back in memory order with the argsort permutation.
  for (const auto& [label, s] :
       {std::tuple{"batch1", Shape{1, 6}}, std::tuple{"batch3", Shape{3, 5}}}) {
    register_grad_case({.op = "scatter_last",
                        .name = std::string("scatter_last/dnc-allocation-") + label,
                        .make_inputs =
                            [s](Rng& r) {
                              return std::vector<GradInput>{
                                  {distinct_rows(r, s, 0.05, 0.95, 1e-3)}};
                            },
                        .build =
                            [](Tape&, std::span<const Var> v) {
                              const Var u = sort(v[0]);
                              const Var a = mul(add_scalar(neg(u), 1.0), cumprod_exclusive(u));
                              return scatter_last(a, argsort(v[0]));
                            },
                        .note = "usage distinct, >= 1e-3 apart (composite with sort and cumprod)"});
  }
  return true;
}();

}  // namespace
}  // namespace memgrad
