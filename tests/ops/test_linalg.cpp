// Linalg ops (ops/linalg.hpp): hand-computed products and gradients in float32 and float64, the
// folding of leading dims in matmul, the four transpose variants of bmm against explicitly
// transposed operands, outer products, error messages, allocation-free repeated steps, and that the
// registered gradient checks of the family pass.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/alloc_counter.hpp"
#include "engine/gradcheck.hpp"
#include "engine/threads.hpp"
#include "ops/ops.hpp"
#include "tests/test_util.hpp"

using namespace memgrad;
using namespace memgrad::test;

namespace {

// [B, r, c] -> [B, c, r], by hand.
Tensor transposed(const Tensor& t) {
  const int64_t batch = t.dim(0), r = t.dim(1), c = t.dim(2);
  Tensor out = Tensor::empty(Shape{batch, c, r}, t.dtype());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) out.set(b * r * c + j * r + i, t.at(b * r * c + i * c + j));
  return out;
}

Tensor iota(const Shape& s, DType d, double start, double step) {
  Tensor t = Tensor::empty(s, d);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, start + step * double(i));
  return t;
}

}  // namespace

TEST_CASE("matmul: hand-computed product and gradients") {
  for (DType d : kBoth) {
    const std::string dtype = dtype_name(d);
    CAPTURE(dtype);
    Tape tape;
    Var a = tape.input(Tensor::from(Shape{2, 3}, d, {1, 2, 3, 4, 5, 6}), true);
    Var b = tape.input(Tensor::from(Shape{3, 2}, d, {7, 8, 9, 10, 11, 12}), true);
    Var c = matmul(a, b);
    CHECK(c.shape() == Shape{2, 2});
    CHECK(c.dtype() == d);
    check_values(c.value(), {58, 64, 139, 154}, tol_of(d));
    // Upstream [[1, 0], [0, 2]]: da = g b^T, db = a^T g.
    tape.backward(c, Tensor::from(Shape{2, 2}, d, {1, 0, 0, 2}));
    check_values(a.grad(), {7, 9, 11, 16, 20, 24}, tol_of(d));
    check_values(b.grad(), {1, 8, 2, 10, 3, 12}, tol_of(d));
  }
}

TEST_CASE("matmul: leading dims of a fold into rows (rank 3 and 4)") {
  for (DType d : kBoth) {
    const std::string dtype = dtype_name(d);
    CAPTURE(dtype);
    Tape tape;
    const Tensor w = iota(Shape{3, 2}, d, -1.0, 0.5);
    const Tensor a3 = iota(Shape{2, 2, 3}, d, 0.25, 0.75);
    Var w_var = tape.input(w, true);
    Var a3_var = tape.input(a3, true);
    Var c3 = matmul(a3_var, w_var);
    CHECK(c3.shape() == Shape{2, 2, 2});
    // The same rows as one [4, 3] matrix.
    Var flat = matmul(tape.input(a3.view(Shape{4, 3})), w_var);
    CHECK(c3.value().to_vector() == flat.value().to_vector());
    // Rank 4: [2, 1, 2, 3] x [3, 2] -> [2, 1, 2, 2], same values again.
    Var c4 = matmul(tape.input(a3.view(Shape{2, 1, 2, 3})), w_var);
    CHECK(c4.shape() == Shape{2, 1, 2, 2});
    CHECK(c4.value().to_vector() == flat.value().to_vector());
    // The weight's gradient sums over every folded row: with upstream ones, dw[p, q] = sum_rows a.
    tape.backward(c3, Tensor::full(c3.shape(), d, 1.0), false);
    std::vector<double> col_sums(3, 0.0);
    for (int64_t i = 0; i < a3.numel(); ++i) col_sums[size_t(i % 3)] += a3.at(i);
    check_values(w_var.grad(),
                 {col_sums[0], col_sums[0], col_sums[1], col_sums[1], col_sums[2], col_sums[2]},
                 tol_of(d));
    // da for every row is the row sums of w = [[-1, -0.5], [0, 0.5], [1, 1.5]]: [-1.5, 0.5, 2.5].
    check_values(a3_var.grad(), {-1.5, 0.5, 2.5, -1.5, 0.5, 2.5, -1.5, 0.5, 2.5, -1.5, 0.5, 2.5},
                 tol_of(d));
  }
}

TEST_CASE("bmm: hand-computed batched product") {
  for (DType d : kBoth) {
    const std::string dtype = dtype_name(d);
    CAPTURE(dtype);
    Tape tape;
    // Batch 0: [[1, 2], [3, 4]] x [[1, 0], [0, 1]]; batch 1: [[1, 1], [0, 1]] x [[2, 3], [4, 5]].
    Var a = tape.input(Tensor::from(Shape{2, 2, 2}, d, {1, 2, 3, 4, 1, 1, 0, 1}));
    Var b = tape.input(Tensor::from(Shape{2, 2, 2}, d, {1, 0, 0, 1, 2, 3, 4, 5}));
    Var c = bmm(a, b);
    CHECK(c.shape() == Shape{2, 2, 2});
    check_values(c.value(), {1, 2, 3, 4, 6, 8, 4, 5}, tol_of(d));
    // a^T b: batch 0 [[1, 3], [2, 4]], batch 1 [[1, 0], [1, 1]] x [[2, 3], [4, 5]] = [[2, 3], [6,
    // 8]].
    check_values(bmm(a, b, true, false).value(), {1, 3, 2, 4, 2, 3, 6, 8}, tol_of(d));
  }
}

TEST_CASE("bmm: the four transpose variants match explicitly transposed operands") {
  for (DType d : kBoth) {
    const std::string dtype = dtype_name(d);
    CAPTURE(dtype);
    const int64_t batch = 2, n = 3, k = 4, m = 2;
    const Tensor a = iota(Shape{batch, n, k}, d, -1.0, 0.125);
    const Tensor b = iota(Shape{batch, k, m}, d, 0.5, -0.0625);
    const Tensor upstream = iota(Shape{batch, n, m}, d, 0.3, 0.1);
    // Reference: plain bmm and its gradients.
    Tape ref;
    Var ra = ref.input(a, true), rb = ref.input(b, true);
    Var rc = bmm(ra, rb);
    ref.backward(rc, upstream, false);
    const Tensor ga = ra.grad().clone(), gb = rb.grad().clone();
    for (int flags = 0; flags < 4; ++flags) {
      const bool ta = flags & 1, tb = flags & 2;
      CAPTURE(ta);
      CAPTURE(tb);
      Tape tape;
      Var va = tape.input(ta ? transposed(a) : a, true);
      Var vb = tape.input(tb ? transposed(b) : b, true);
      Var c = bmm(va, vb, ta, tb);
      CHECK(c.shape() == Shape{batch, n, m});
      check_values(c.value(), rc.value().to_vector(), tol_of(d));
      tape.backward(c, upstream, false);
      // The gradient of a transposed operand is the transpose of the plain gradient.
      check_values(va.grad(), (ta ? transposed(ga) : ga).to_vector(), tol_of(d));
      check_values(vb.grad(), (tb ? transposed(gb) : gb).to_vector(), tol_of(d));
    }
  }
}

TEST_CASE("outer: batched outer product and its gradients") {
  for (DType d : kBoth) {
    const std::string dtype = dtype_name(d);
    CAPTURE(dtype);
    Tape tape;
    Var a = tape.input(Tensor::from(Shape{2, 2}, d, {1, 2, 3, -1}), true);
    Var b = tape.input(Tensor::from(Shape{2, 3}, d, {1, 0, -2, 0.5, 4, 1}), true);
    Var c = outer(a, b);
    CHECK(c.shape() == Shape{2, 2, 3});
    check_values(c.value(), {1, 0, -2, 2, 0, -4, 1.5, 12, 3, -0.5, -4, -1}, tol_of(d));
    // Upstream ones: da[i, p] = sum_q b[i, q], db[i, q] = sum_p a[i, p].
    tape.backward(c, Tensor::full(c.shape(), d, 1.0), false);
    check_values(a.grad(), {-1, -1, 5.5, 5.5}, tol_of(d));
    check_values(b.grad(), {3, 3, 3, 2, 2, 2}, tol_of(d));
  }
}

TEST_CASE("addmm and matmul: a zero constant operand skips the product, same values and grads") {
  // a = 0 made by tape.constant (an initial state) against the same zeros as an input: equal
  // outputs and gradients for c and b; with the constant, b gets no gradient at all (none needed).
  const Tensor bias = Tensor::from(Shape{3}, DType::f64, {0.5, -1.0, 2.0});
  const Tensor w = Tensor::from(Shape{2, 3}, DType::f64, {1, 2, 3, 4, 5, 6});
  const Tensor up = Tensor::from(Shape{4, 3}, DType::f64, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  for (bool constant : {false, true}) {
    CAPTURE(constant);
    Tape tape;
    Var c = tape.input(bias, true), b = tape.input(w, true);
    Var a = constant ? tape.constant(Shape{4, 2}, DType::f64, 0.0)
                     : tape.input(Tensor::zeros(Shape{4, 2}, DType::f64), true);
    CHECK(tape.is_zero_constant(a.id) == constant);
    Var y = add(addmm(c, a, b), matmul(a, b));
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t j = 0; j < 3; ++j) CHECK(y.value().at(r * 3 + j) == bias.at(j));
    tape.backward(y, up);
    CHECK(c.grad().to_vector() == std::vector<double>{22, 26, 30});
    if (constant)
      CHECK_FALSE(b.grad().defined());
    else
      CHECK(b.grad().to_vector() == std::vector<double>(6, 0.0));
  }
  // A constant filled after it was made (as index lists are) is not zero: the product is made.
  Tape tape;
  Var a = tape.constant(Shape{1, 2}, DType::f64, 0.0);
  tape.value(a.id).set(1, 3.0);
  CHECK_FALSE(tape.is_zero_constant(a.id));
  CHECK(matmul(a, tape.input(w)).value().to_vector() == std::vector<double>{12, 15, 18});
}

TEST_CASE("linalg: shape and dtype errors name the op and the shapes") {
  Tape tape;
  Var a23 = tape.input(Tensor::zeros(Shape{2, 3}, DType::f32));
  Var b42 = tape.input(Tensor::zeros(Shape{4, 2}, DType::f32));
  Var b32d = tape.input(Tensor::zeros(Shape{3, 2}, DType::f64));
  Var v3 = tape.input(Tensor::zeros(Shape{3}, DType::f32));
  Var b232 = tape.input(Tensor::zeros(Shape{2, 3, 2}, DType::f32));
  CHECK_THROWS_WITH_AS(matmul(a23, b42), "matmul: inner dims differ: [2,3] x [4,2]", Error);
  CHECK_THROWS_WITH_AS(matmul(a23, b32d), "matmul: dtypes differ (float32 vs float64)", Error);
  CHECK_THROWS_WITH_AS(matmul(v3, b42), "matmul: a must have rank 2 to 4, got [3] x [4,2]", Error);
  CHECK_THROWS_WITH_AS(matmul(a23, b232), "matmul: b must be a matrix [k, m], got [2,3] x [2,3,2]",
                       Error);

  Var x234 = tape.input(Tensor::zeros(Shape{2, 3, 4}, DType::f32));
  Var y353 = tape.input(Tensor::zeros(Shape{3, 5, 3}, DType::f32));
  Var y253 = tape.input(Tensor::zeros(Shape{2, 5, 3}, DType::f32));
  CHECK_THROWS_WITH_AS(bmm(x234, y353), "bmm: batch sizes differ: [2,3,4] x [3,5,3]", Error);
  CHECK_THROWS_WITH_AS(bmm(x234, y253), "bmm: inner dims differ: [2,3,4] x [2,5,3]", Error);
  CHECK_THROWS_WITH_AS(bmm(x234, y253, false, true), "bmm: inner dims differ: [2,3,4] x [2,5,3]^T",
                       Error);
  CHECK_NOTHROW(bmm(x234, tape.input(Tensor::zeros(Shape{2, 5, 4}, DType::f32)), false, true));
  CHECK_THROWS_WITH_AS(bmm(a23, a23), "bmm: both inputs must have rank 3, got [2,3] x [2,3]",
                       Error);

  CHECK_THROWS_WITH_AS(outer(a23, b42), "outer: batch sizes differ: [2,3] and [4,2]", Error);
  CHECK_THROWS_WITH_AS(outer(v3, a23), "outer: inputs must be [B, n] and [B, m], got [3] and [2,3]",
                       Error);

  Tape other;
  Var foreign = other.input(Tensor::zeros(Shape{3, 2}, DType::f32));
  CHECK_THROWS_WITH_AS(matmul(a23, foreign), "matmul: inputs from different tapes", Error);
}

TEST_CASE("linalg: large products are the same with 1 and 4 threads") {
  // Big enough that gemm splits rows into parallel blocks and gemm_batched runs batches in
  // parallel.
  const Tensor a = iota(Shape{8, 64, 96}, DType::f32, -1.0, 1.0 / 4096);
  const Tensor w = iota(Shape{96, 80}, DType::f32, 0.5, -1.0 / 8192);
  const Tensor m = iota(Shape{8, 96, 96}, DType::f32, 0.25, 1.0 / 65536);
  auto run = [&](int threads) {
    ThreadScope scope(threads);
    Tape tape;
    Var va = tape.input(a, true), vw = tape.input(w, true), vm = tape.input(m, true);
    Var c = matmul(va, vw);
    Var e = bmm(va, vm, false, true);
    tape.backward(c, Tensor::full(c.shape(), DType::f32, 1.0), false);
    tape.backward(e, Tensor::full(e.shape(), DType::f32, 0.5), false);
    return std::vector<std::vector<double>>{c.value().to_vector(), e.value().to_vector(),
                                            va.grad().to_vector(), vw.grad().to_vector(),
                                            vm.grad().to_vector()};
  };
  CHECK(run(1) == run(4));
}

TEST_CASE("linalg: a repeated step allocates nothing") {
  ThreadScope one_thread(1);
  Tape tape;
  const Tensor a = iota(Shape{2, 3, 4}, DType::f32, -1, 0.1);
  const Tensor w = iota(Shape{4, 5}, DType::f32, 1, -0.05);
  const Tensor v = iota(Shape{2, 3}, DType::f32, 0.5, 0.2);
  const Tensor upstream = iota(Shape{2, 5, 4}, DType::f32, 0.1, 0.01);
  auto step = [&] {
    tape.reset();
    Var va = tape.input(a, true), vw = tape.input(w, true), vv = tape.input(v, true);
    Var c = matmul(va, vw);           // [2, 3, 5]
    Var o = outer(vv, vv);            // [2, 3, 3]
    Var f = bmm(o, c);                // [2, 3, 5]
    Var e = bmm(f, va, true, false);  // [2, 5, 4]
    tape.backward(e, upstream);
  };
  step();
  step();
  const uint64_t before = heap_allocations();
  step();
  CHECK(heap_allocations() == before);
}

TEST_CASE("linalg: registered gradient checks pass") {
  int cases = 0;
  for (const GradCase& c : all_grad_cases()) {
    if (c.op != "matmul" && c.op != "bmm" && c.op != "outer") continue;
    CAPTURE(c.name);
    const GradCheckResult r = run_grad_case(c);
    CHECK_MESSAGE(r.passed, r.message);
    ++cases;
  }
  CHECK(cases >= 19);  // 6 matmul + 8 bmm + 3 outer + 2 cosine-similarity
}
