// Matrix products: matmul (rows folded, weight on the right), bmm (batched, optional transposes)
// and outer and mul_complement_outer (batched outer products, plain loops). Forward and backward
// are each a fixed, small number of gemm calls:
//   C = op(A) op(B)  =>  d op(A) = G op(B)^T,   d op(B) = op(A)^T G,
// and a gradient of a transposed operand is the transpose of that, which gemm's flags give for
// free. Gradients go straight into the inputs' gradient buffers: beta = 1 adds, and beta = 0
// stores on a buffer's first contribution (which then needs no zeroing).
#include "ops/linalg.hpp"

#include <algorithm>

#include "engine/blas.hpp"
#include "engine/gradcheck.hpp"
#include "engine/small_gemm.hpp"

namespace memgrad {
namespace {

MG_OP_READS(matmul, reads_factors());
MG_OP_READS(addmm, reads_factors(1));
MG_OP_READS(bmm, reads_factors());
MG_OP_READS(outer, reads_factors());
MG_OP_READS(mul_complement_outer, kReadsInputs);

// The beta of a gradient product: 0 stores into a gradient buffer met for the first time in this
// backward pass (uninitialised, see Tape::grad_for_write), 1 adds into a live one.
template <class T>
T beta(bool overwrite) {
  return overwrite ? T(0) : T(1);
}

// Product of all dims but the last: the number of rows when leading dims are folded.
int64_t folded_rows(const Shape& s) {
  int64_t rows = 1;
  for (int i = 0; i + 1 < s.rank; ++i) rows *= s.dims[size_t(i)];
  return rows;
}

void check_pair(const char* op, Var a, Var b) {
  MG_CHECK(a.defined() && b.defined(), op, ": undefined input");
  MG_CHECK(a.tape == b.tape, op, ": inputs from different tapes");
  MG_CHECK(a.dtype() == b.dtype(), op, ": dtypes differ (", dtype_name(a.dtype()), " vs ",
           dtype_name(b.dtype()), ")");
}

// ---------------------------------------------------------------- matmul, addmm
// a [rows, k] (leading dims folded), b [k, m], out [rows, m].

// ---- b^T once per backward pass, for kernels that cannot read a transposed b (LIBXSMM's):
// da = g b^T would otherwise copy b transposed at every call, that is at every time step for a
// recurrent weight. The products that share a b agree when recorded on one of them, the owner
// (ints[1] = owner + 1 in each, 0 for none), whose saved slot gets b^T from whichever backward
// needs it first (the owner's ints[2] = 1 once made). The tape's index scratch lists, per b, its
// owner as pairs (b, owner); an entry is live when the owner is a product recorded before this one
// whose b is that node, so entries left by earlier steps are recognised and reused, and the list
// stops growing once it holds as many pairs as a step has weights.
int kOwnersKey;  // the scratch's key

bool is_product_with_b(const Tape& tape, NodeId id, NodeId b) {
  const Node& n = tape.node(id);
  if (n.op == &kOp_matmul) return tape.input_id(id, 1) == b;
  if (n.op == &kOp_addmm) return tape.input_id(id, 2) == b;
  return false;
}

// Sets node out's owner of b^T (see above); only when a's gradient will need g b^T.
void share_transposed_b(Var out, Var a, Var b) {
  Tape& tape = *out.tape;
  if (gemm_reads_transposed_b() || !tape.requires_grad(out.id) || !tape.requires_grad(a.id)) return;
  std::vector<int64_t>& owners = tape.index_scratch(&kOwnersKey);
  size_t free = owners.size();
  for (size_t i = 0; i < owners.size(); i += 2) {
    const NodeId nb = NodeId(owners[i]), owner = NodeId(owners[i + 1]);
    const bool live = owner < out.id && is_product_with_b(tape, owner, nb);
    if (live && nb == b.id) {
      tape.node(out.id).ints[1] = owner + 1;
      return;
    }
    if (!live && free == owners.size()) free = i;
  }
  if (free == owners.size()) owners.resize(owners.size() + 2);
  owners[free] = b.id;
  owners[free + 1] = out.id;
  tape.node(out.id).ints[1] = out.id + 1;
}

// b^T [m, k] for node id's backward (b [k, m] its input ib), or null when it has no owner.
template <class T>
const T* transposed_b(Tape& tape, NodeId id, NodeId ib) {
  if (tape.node(id).ints[1] == 0) return nullptr;
  const NodeId owner = NodeId(tape.node(id).ints[1] - 1);
  const Tensor& b = tape.value(ib);
  const int64_t k = b.dim(0), m = b.dim(1);
  if (tape.node(owner).ints[2] == 0) {
    transpose(b.data<T>(), k, m, m, tape.make_saved(owner, Shape{m, k}, b.dtype()).data<T>(), k);
    tape.node(owner).ints[2] = 1;
  }
  return tape.saved(owner).data<T>();
}

// The product's part of a backward: da = g b^T and db = a^T g (over all rows at once), for the
// product's inputs ia and ib of node id, whose gradient is g. Shared by matmul and addmm.
void product_backward(Tape& tape, NodeId id, NodeId ia, NodeId ib) {
  if (tape.node(id).ints[0] != 0) return;  // a was a zero constant: no gradient reaches b
  const Tensor &a = tape.value(ia), &b = tape.value(ib);
  const int64_t k = b.dim(0), m = b.dim(1), rows = folded_rows(a.shape());
  MG_DISPATCH(a.dtype(), T, {
    const T* g = tape.grad(id).data<T>();
    bool overwrite = false;
    if (tape.requires_grad(ia)) {  // da = g b^T: [rows, m] x [m, k]
      T* ga = tape.grad_for_write(ia, overwrite).data<T>();
      if (const T* bt = transposed_b<T>(tape, id, ib))  // b^T made once: a plain product
        gemm<T>(false, false, rows, k, m, T(1), g, m, bt, k, beta<T>(overwrite), ga, k);
      else
        gemm<T>(false, true, rows, k, m, T(1), g, m, b.data<T>(), m, beta<T>(overwrite), ga, k);
    }
    if (tape.requires_grad(ib)) {  // db = a^T g over all rows at once: [k, rows] x [rows, m]
      T* gb = tape.grad_for_write(ib, overwrite).data<T>();
      gemm<T>(true, false, k, m, rows, T(1), a.data<T>(), k, g, m, beta<T>(overwrite), gb, m);
    }
  });
}

void matmul_backward(Tape& tape, NodeId id) {
  product_backward(tape, id, tape.input_id(id, 0), tape.input_id(id, 1));
}

// c + a b: inputs {c, a, b}; c is [rows, m] (the output's shape) or [m] (a bias). The product's
// part first: a c of the output's shape may then take g's buffer itself (Tape::pass_grad).
void addmm_backward(Tape& tape, NodeId id) {
  product_backward(tape, id, tape.input_id(id, 1), tape.input_id(id, 2));
  const NodeId ic = tape.input_id(id, 0);
  if (!tape.requires_grad(ic)) return;
  const Tensor& out = tape.value(id);
  const int64_t m = out.dim(-1), rows = out.numel() / m;
  if (tape.value(ic).numel() != m || rows == 1) {  // c has the output's elements: g itself
    tape.pass_grad(id, ic);
    return;
  }
  MG_DISPATCH(out.dtype(), T, {  // a bias: the column sums of g
    const T* g = tape.grad(id).data<T>();
    bool overwrite = false;
    T* gc = tape.grad_for_write(ic, overwrite).data<T>();
    if (overwrite) std::fill_n(gc, m, T(0));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < m; ++j) gc[j] += g[r * m + j];
  });
}

// ---------------------------------------------------------------- bmm
// ints: {trans_a, trans_b}. Dims are re-derived from the input shapes.
struct BmmDims {
  int64_t batch, n, k, m;
};
BmmDims bmm_dims(const Shape& a, const Shape& b, bool ta, bool tb) {
  return {a[0], ta ? a[2] : a[1], ta ? a[1] : a[2], tb ? b[1] : b[2]};
}

void bmm_backward(Tape& tape, NodeId id) {
  const NodeId ia = tape.input_id(id, 0), ib = tape.input_id(id, 1);
  const Node& node = tape.node(id);
  const bool ta = node.ints[0] != 0, tb = node.ints[1] != 0;
  const Tensor &a = tape.value(ia), &b = tape.value(ib);
  const auto [batch, n, k, m] = bmm_dims(a.shape(), b.shape(), ta, tb);
  const int64_t sa = n * k, sb = k * m, sg = n * m;
  MG_DISPATCH(a.dtype(), T, {
    const T *g = tape.grad(id).data<T>(), *pa = a.data<T>(), *pb = b.data<T>();
    bool overwrite = false;
    if (tape.requires_grad(ia)) {
      T* ga = tape.grad_for_write(ia, overwrite).data<T>();
      const T beta_a = beta<T>(overwrite);
      if (!ta)  // dA [n, k] = G op(B)^T
        gemm_batched<T>(batch, false, !tb, n, k, m, T(1), g, sg, pb, sb, beta_a, ga, sa);
      else  // dA [k, n] = (G op(B)^T)^T = op(B) G^T
        gemm_batched<T>(batch, tb, true, k, n, m, T(1), pb, sb, g, sg, beta_a, ga, sa);
    }
    if (tape.requires_grad(ib)) {
      T* gb = tape.grad_for_write(ib, overwrite).data<T>();
      const T beta_b = beta<T>(overwrite);
      if (!tb)  // dB [k, m] = op(A)^T G
        gemm_batched<T>(batch, !ta, false, k, m, n, T(1), pa, sa, g, sg, beta_b, gb, sb);
      else  // dB [m, k] = (op(A)^T G)^T = G^T op(A)
        gemm_batched<T>(batch, true, ta, m, k, n, T(1), g, sg, pa, sa, beta_b, gb, sb);
    }
  });
}

// ---------------------------------------------------------------- outer
// Plain loops, not gemm: a product with k = 1 is one multiply per output element, which no BLAS
// call or kernel lookup per sample pays for.
void outer_backward(Tape& tape, NodeId id) {
  const NodeId ia = tape.input_id(id, 0), ib = tape.input_id(id, 1);
  const Tensor &a = tape.value(ia), &b = tape.value(ib);
  const int64_t batch = a.dim(0), n = a.dim(1), m = b.dim(1);
  MG_DISPATCH(a.dtype(), T, {
    const T *g = tape.grad(id).data<T>(), *pa = a.data<T>(), *pb = b.data<T>();
    bool overwrite = false;
    if (tape.requires_grad(ia)) {  // da[i, p] = sum_q G[i, p, q] b[i, q]
      T* ga = tape.grad_for_write(ia, overwrite).data<T>();
      for (int64_t i = 0; i < batch; ++i)
        for (int64_t p = 0; p < n; ++p) {
          const T* gr = g + (i * n + p) * m;
          T s = 0;
          for (int64_t q = 0; q < m; ++q) s += gr[q] * pb[i * m + q];
          ga[i * n + p] = overwrite ? s : ga[i * n + p] + s;
        }
    }
    if (tape.requires_grad(ib)) {  // db[i, q] = sum_p a[i, p] G[i, p, q]
      T* gb = tape.grad_for_write(ib, overwrite).data<T>();
      if (overwrite) std::fill_n(gb, batch * m, T(0));
      for (int64_t i = 0; i < batch; ++i)
        for (int64_t p = 0; p < n; ++p) {
          const T ap = pa[i * n + p], *gr = g + (i * n + p) * m;
          T* row = gb + i * m;
          for (int64_t q = 0; q < m; ++q) row[q] += ap * gr[q];
        }
    }
  });
}

// ---------------------------------------------------------------- mul_complement_outer
// y = (1 - a b^T) x per row i; with g = dL/dy:
//   dx[i, p, q] = g (1 - a[i, p] b[i, q]),  da[i, p] = -sum_q g x b[i, q],
//   db[i, q] = -sum_p g x a[i, p].
// It recomputes a b^T (one multiply per element) instead of keeping it: the DNC kept one
// [B, N, W] erase product per step for its backward, 4.3 MiB of dmnc-late's 38 MiB step on
// sum2seq's longest batch.
void mul_complement_outer_backward(Tape& tape, NodeId id) {
  const NodeId ia = tape.input_id(id, 0), ib = tape.input_id(id, 1), ix = tape.input_id(id, 2);
  const Tensor &a = tape.value(ia), &b = tape.value(ib), &x = tape.value(ix);
  const int64_t batch = a.dim(0), n = a.dim(1), m = b.dim(1);
  MG_DISPATCH(a.dtype(), T, {
    const T *g = tape.grad(id).data<T>(), *pa = a.data<T>(), *pb = b.data<T>();
    const T* px = x.data<T>();
    bool overwrite = false;
    if (tape.requires_grad(ix)) {
      T* gx = tape.grad_for_write(ix, overwrite).data<T>();
      for (int64_t i = 0; i < batch; ++i)
        for (int64_t p = 0; p < n; ++p) {
          const T ap = pa[i * n + p], *bq = pb + i * m;
          const int64_t row = (i * n + p) * m;
          if (overwrite)
            for (int64_t q = 0; q < m; ++q) gx[row + q] = g[row + q] * (T(1) - ap * bq[q]);
          else
            for (int64_t q = 0; q < m; ++q) gx[row + q] += g[row + q] * (T(1) - ap * bq[q]);
        }
    }
    if (tape.requires_grad(ia)) {
      T* ga = tape.grad_for_write(ia, overwrite).data<T>();
      for (int64_t i = 0; i < batch; ++i)
        for (int64_t p = 0; p < n; ++p) {
          const int64_t row = (i * n + p) * m;
          T s = 0;
          for (int64_t q = 0; q < m; ++q) s += g[row + q] * px[row + q] * pb[i * m + q];
          ga[i * n + p] = overwrite ? -s : ga[i * n + p] - s;
        }
    }
    if (tape.requires_grad(ib)) {
      T* gb = tape.grad_for_write(ib, overwrite).data<T>();
      if (overwrite) std::fill_n(gb, batch * m, T(0));
      for (int64_t i = 0; i < batch; ++i)
        for (int64_t p = 0; p < n; ++p) {
          const T ap = pa[i * n + p];
          const int64_t row = (i * n + p) * m;
          T* out = gb + i * m;
          for (int64_t q = 0; q < m; ++q) out[q] -= ap * g[row + q] * px[row + q];
        }
    }
  });
}

// Checks a [..., k] (rank 2 to 4) against b [k, m] for `op` and returns the product's shape.
Shape product_shape(const char* op, Var a, Var b) {
  check_pair(op, a, b);
  MG_CHECK(a.shape().rank >= 2 && a.shape().rank <= 4, op, ": a must have rank 2 to 4, got ",
           a.shape(), " x ", b.shape());
  MG_CHECK(b.shape().rank == 2, op, ": b must be a matrix [k, m], got ", a.shape(), " x ",
           b.shape());
  MG_CHECK(a.dim(-1) == b.dim(0), op, ": inner dims differ: ", a.shape(), " x ", b.shape());
  Shape out = a.shape();
  out[-1] = b.dim(1);
  return out;
}

// a b with a an all-zero constant (an initial state h = 0, which has no gradient) is zero:
// forward and backward skip the product (ints[0] = 1 tells the backward).
bool skip_zero_product(Var out, Var a) {
  if (!a.tape->is_zero_constant(a.id)) return false;
  a.tape->node(out.id).ints[0] = 1;
  return true;
}

}  // namespace

Var matmul(Var a, Var b) {
  const Shape out_shape = product_shape("matmul", a, b);
  const int64_t k = b.dim(0), m = b.dim(1), rows = folded_rows(a.shape());
  Var out = a.tape->record(kOp_matmul, out_shape, a.dtype(), {a, b}, matmul_backward);
  share_transposed_b(out, a, b);
  if (skip_zero_product(out, a)) {
    a.tape->value(out.id).zero();
    return out;
  }
  MG_DISPATCH(a.dtype(), T, {
    gemm<T>(false, false, rows, m, k, T(1), a.value().data<T>(), k, b.value().data<T>(), m, T(0),
            a.tape->value(out.id).data<T>(), m);
  });
  return out;
}

Var addmm(Var c, Var a, Var b) {
  const Shape out_shape = product_shape("addmm", a, b);
  check_pair("addmm", c, a);
  const int64_t k = b.dim(0), m = b.dim(1), rows = folded_rows(a.shape());
  const bool bias = c.shape() == Shape{m};
  MG_CHECK(bias || c.shape() == out_shape, "addmm: c of shape ", c.shape(), " must be ", out_shape,
           " or [", m, "] for a product ", a.shape(), " x ", b.shape());
  Var out = a.tape->record(kOp_addmm, out_shape, a.dtype(), {c, a, b}, addmm_backward);
  share_transposed_b(out, a, b);
  MG_DISPATCH(a.dtype(), T, {
    T* y = a.tape->value(out.id).data<T>();
    const T* pc = c.value().data<T>();
    if (bias)
      for (int64_t r = 0; r < rows; ++r) std::copy_n(pc, m, y + r * m);
    else
      std::copy_n(pc, rows * m, y);
    if (!skip_zero_product(out, a))
      gemm<T>(false, false, rows, m, k, T(1), a.value().data<T>(), k, b.value().data<T>(), m, T(1),
              y, m);
  });
  return out;
}

Var bmm(Var a, Var b, bool trans_a, bool trans_b) {
  check_pair("bmm", a, b);
  MG_CHECK(a.shape().rank == 3 && b.shape().rank == 3, "bmm: both inputs must have rank 3, got ",
           a.shape(), " x ", b.shape());
  MG_CHECK(a.dim(0) == b.dim(0), "bmm: batch sizes differ: ", a.shape(), " x ", b.shape());
  const BmmDims d = bmm_dims(a.shape(), b.shape(), trans_a, trans_b);
  const int64_t kb = trans_b ? b.dim(2) : b.dim(1);
  MG_CHECK(d.k == kb, "bmm: inner dims differ: ", a.shape(), trans_a ? "^T" : "", " x ", b.shape(),
           trans_b ? "^T" : "");
  Var out = a.tape->record(kOp_bmm, Shape{d.batch, d.n, d.m}, a.dtype(), {a, b}, bmm_backward);
  a.tape->node(out.id).ints = {trans_a, trans_b, 0, 0};
  MG_DISPATCH(a.dtype(), T, {
    gemm_batched<T>(d.batch, trans_a, trans_b, d.n, d.m, d.k, T(1), a.value().data<T>(), d.n * d.k,
                    b.value().data<T>(), d.k * d.m, T(0), a.tape->value(out.id).data<T>(),
                    d.n * d.m);
  });
  return out;
}

Var outer(Var a, Var b) {
  check_pair("outer", a, b);
  MG_CHECK(a.shape().rank == 2 && b.shape().rank == 2,
           "outer: inputs must be [B, n] and [B, m], got ", a.shape(), " and ", b.shape());
  MG_CHECK(a.dim(0) == b.dim(0), "outer: batch sizes differ: ", a.shape(), " and ", b.shape());
  const int64_t batch = a.dim(0), n = a.dim(1), m = b.dim(1);
  Var out = a.tape->record(kOp_outer, Shape{batch, n, m}, a.dtype(), {a, b}, outer_backward);
  MG_DISPATCH(a.dtype(), T, {  // out[i, p, q] = a[i, p] b[i, q]
    const T *pa = a.value().data<T>(), *pb = b.value().data<T>();
    T* y = a.tape->value(out.id).data<T>();
    for (int64_t i = 0; i < batch; ++i)
      for (int64_t p = 0; p < n; ++p) {
        const T ap = pa[i * n + p];
        T* row = y + (i * n + p) * m;
        for (int64_t q = 0; q < m; ++q) row[q] = ap * pb[i * m + q];
      }
  });
  return out;
}

Var mul_complement_outer(Var a, Var b, Var x) {
  check_pair("mul_complement_outer", a, b);
  check_pair("mul_complement_outer", a, x);
  MG_CHECK(a.shape().rank == 2 && b.shape().rank == 2 && a.dim(0) == b.dim(0),
           "mul_complement_outer: a and b must be [B, n] and [B, m], got ", a.shape(), " and ",
           b.shape());
  const int64_t batch = a.dim(0), n = a.dim(1), m = b.dim(1);
  MG_CHECK(x.shape() == Shape({batch, n, m}), "mul_complement_outer: x must be [", batch, ", ", n,
           ", ", m, "] for a ", a.shape(), " and b ", b.shape(), ", got ", x.shape());
  Var out = a.tape->record(kOp_mul_complement_outer, x.shape(), a.dtype(), {a, b, x},
                           mul_complement_outer_backward);
  MG_DISPATCH(a.dtype(), T, {
    const T *pa = a.value().data<T>(), *pb = b.value().data<T>(), *px = x.value().data<T>();
    T* y = a.tape->value(out.id).data<T>();
    for (int64_t i = 0; i < batch; ++i)
      for (int64_t p = 0; p < n; ++p) {
        const T ap = pa[i * n + p], *bq = pb + i * m;
        const int64_t row = (i * n + p) * m;
        for (int64_t q = 0; q < m; ++q) y[row + q] = (T(1) - ap * bq[q]) * px[row + q];
      }
  });
  return out;
}

}  // namespace memgrad

// ---------------------------------------------------------------- gradient-check cases
namespace memgrad {
namespace {

std::vector<GradInput> two_random(Rng& r, const Shape& a, const Shape& b) {
  return {{random_tensor(r, a)}, {random_tensor(r, b)}};
}

const bool kLinalgCases = [] {
  struct Pair {
    const char* label;
    Shape a, b;
  };
  // matmul: a of rank 2, 3 and 4 (leading dims folded into rows), batch 1, and k = 1.
  for (const Pair& p : {Pair{"rank2", {3, 4}, {4, 5}}, Pair{"rank3", {2, 3, 4}, {4, 2}},
                        Pair{"rank4", {2, 2, 3, 4}, {4, 3}}, Pair{"batch1", {1, 4}, {4, 3}},
                        Pair{"rank3-batch1", {1, 1, 3}, {3, 2}}, Pair{"k1", {3, 1}, {1, 4}}}) {
    register_grad_case({.op = "matmul",
                        .name = std::string("matmul/") + p.label,
                        .make_inputs = [p](Rng& r) { return two_random(r, p.a, p.b); },
                        .build = [](Tape&, std::span<const Var> v) { return matmul(v[0], v[1]); },
                        .note = "bilinear: central differences are exact up to rounding"});
  }
  // addmm: c the product's shape or a bias row, a of rank 2 and 3, batch 1.
  struct Triple {
    const char* label;
    Shape c, a, b;
  };
  for (const Triple& p :
       {Triple{"full-rank2", {3, 5}, {3, 4}, {4, 5}}, Triple{"bias-rank2", {5}, {3, 4}, {4, 5}},
        Triple{"bias-rank3", {2}, {2, 3, 4}, {4, 2}},
        Triple{"full-rank3", {2, 3, 2}, {2, 3, 4}, {4, 2}},
        Triple{"bias-batch1", {3}, {1, 4}, {4, 3}}}) {
    register_grad_case(
        {.op = "addmm",
         .name = std::string("addmm/") + p.label,
         .make_inputs =
             [p](Rng& r) {
               return std::vector<GradInput>{
                   {random_tensor(r, p.c)}, {random_tensor(r, p.a)}, {random_tensor(r, p.b)}};
             },
         .build = [](Tape&, std::span<const Var> v) { return addmm(v[0], v[1], v[2]); },
         .note = "affine in each input: central differences are exact up to "
                 "rounding"});
  }
  // bmm: all four transpose combinations, at batch 2 and batch 1 (n = 3, k = 4, m = 2).
  for (int64_t batch : {2, 1}) {
    for (int flags = 0; flags < 4; ++flags) {
      const bool ta = flags & 1, tb = flags & 2;
      const int64_t n = 3, k = 4, m = 2;
      const Shape as = ta ? Shape{batch, k, n} : Shape{batch, n, k};
      const Shape bs = tb ? Shape{batch, m, k} : Shape{batch, k, m};
      const std::string label =
          std::string(ta ? "T" : "N") + (tb ? "T" : "N") + "-B" + std::to_string(batch);
      register_grad_case(
          {.op = "bmm",
           .name = "bmm/" + label,
           .make_inputs = [as, bs](Rng& r) { return two_random(r, as, bs); },
           .build = [ta, tb](Tape&, std::span<const Var> v) { return bmm(v[0], v[1], ta, tb); },
           .note = "bilinear: central differences are exact up to rounding"});
    }
  }
  // outer: batch 2 and batch 1, and n = 1.
  for (const Pair& p :
       {Pair{"B2", {2, 3}, {2, 4}}, Pair{"batch1", {1, 3}, {1, 2}}, Pair{"n1", {3, 1}, {3, 2}}}) {
    register_grad_case({.op = "outer",
                        .name = std::string("outer/") + p.label,
                        .make_inputs = [p](Rng& r) { return two_random(r, p.a, p.b); },
                        .build = [](Tape&, std::span<const Var> v) { return outer(v[0], v[1]); }});
  }
  // mul_complement_outer: batch 2 and batch 1, and n = 1.
  for (const Pair& p :
       {Pair{"B2", {2, 3}, {2, 4}}, Pair{"batch1", {1, 3}, {1, 2}}, Pair{"n1", {3, 1}, {3, 2}}}) {
    register_grad_case(
        {.op = "mul_complement_outer",
         .name = std::string("mul_complement_outer/") + p.label,
         .make_inputs =
             [p](Rng& r) {
               std::vector<GradInput> in = two_random(r, p.a, p.b);
               in.push_back({random_tensor(r, Shape{p.a[0], p.a[1], p.b[1]})});
               return in;
             },
         .build = [](Tape&,
                     std::span<const Var> v) { return mul_complement_outer(v[0], v[1], v[2]); }});
  }
  return true;
}();

}  // namespace
}  // namespace memgrad
