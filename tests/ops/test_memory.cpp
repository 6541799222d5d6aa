// Memory-addressing helpers (ops/memory.hpp): hand-computed forward and backward values, argument
// errors, and the invariants the ops promise (stable sort, scatter undoes sort, exact gradients at
// zeros, no allocation in steady state).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "engine/alloc_counter.hpp"
#include "ops/ops.hpp"
#include "tests/test_util.hpp"

using namespace memgrad;

namespace {

Var make(Tape& tape, const Shape& s, DType t, const std::vector<double>& v, bool grad = false) {
  return tape.input(Tensor::from(s, t, v), grad);
}

// Gradient of x after backward(out, upstream).
std::vector<double> grad_of(Var out, Var x, const std::vector<double>& upstream) {
  out.tape->backward(out, Tensor::from(out.shape(), out.dtype(), upstream));
  return x.grad().to_vector();
}

}  // namespace

TEST_CASE("cumprod_exclusive: forward values along the last and the first axis") {
  for (DType t : test::kBoth) {
    CAPTURE(dtype_name(t));
    Tape tape;
    Var x = make(tape, {2, 4}, t, {2, 3, 0, 4, 1, 0.5, 1, 3});
    CHECK(cumprod_exclusive(x).value().to_vector() ==
          std::vector<double>{1, 2, 6, 0, 1, 1, 0.5, 0.5});
    Var y = make(tape, {3, 2}, t, {1, 2, 3, 4, 5, 6});
    CHECK(cumprod_exclusive(y, 0).value().to_vector() == std::vector<double>{1, 1, 1, 2, 3, 8});
    CHECK(cumprod_exclusive(y, -2).value().to_vector() == std::vector<double>{1, 1, 1, 2, 3, 8});
    Var one = make(tape, {1}, t, {7});
    CHECK(cumprod_exclusive(one).value().to_vector() == std::vector<double>{1});
  }
}

TEST_CASE("cumprod_exclusive: exact, finite gradients at exact zeros (no division)") {
  for (DType t : test::kBoth) {
    CAPTURE(dtype_name(t));
    Tape tape;
    // out = [1, 2, 0, 0]; dL/dx_j = sum_{i>j} g_i prod_{k<i, k!=j} x_k with g = 1:
    // dx0 = 1 + x1 + x1 x2 = 1, dx1 = x0 + x0 x2 = 8, dx2 = x0 x1 = 0, dx3 = 0.
    Var x = make(tape, {1, 4}, t, {2, 0, 3, 4}, true);
    CHECK(grad_of(cumprod_exclusive(x), x, {1, 1, 1, 1}) == std::vector<double>{1, 8, 0, 0});
    tape.reset();
    // Two zeros: out = [1, 0, 0, 0]; dx0 = g1 + g2 x1 + g3 x1 x2 = 1 + 2 * 2 + 3 * 0 = 5.
    Var z = make(tape, {4}, t, {0, 2, 0, 5}, true);
    CHECK(grad_of(cumprod_exclusive(z), z, {7, 1, 2, 3}) == std::vector<double>{5, 0, 0, 0});
    tape.reset();
    // Ones and a zero at the end of a row, along axis 0 of a [3, 2] tensor.
    Var w = make(tape, {3, 2}, t, {1, 0, 1, 1, 0, 1}, true);
    // column 0: x = [1, 1, 0], g = [1, 2, 3]: dx0 = g1 + g2 x1 = 5, dx1 = g2 x0 = 3, dx2 = 0.
    // column 1: x = [0, 1, 1], g = [4, 5, 6]: dx0 = 5 + 6 = 11, dx1 = 6 * 0 = 0, dx2 = 0.
    CHECK(grad_of(cumprod_exclusive(w, 0), w, {1, 4, 2, 5, 3, 6}) ==
          std::vector<double>{5, 11, 3, 0, 0, 0});
  }
}

TEST_CASE("cumprod_exclusive: argument errors name the op and the shape") {
  Tape tape;
  Var x = make(tape, {2, 3}, DType::f64, {1, 2, 3, 4, 5, 6});
  CHECK_THROWS_WITH_AS(cumprod_exclusive(x, 2), doctest::Contains("cumprod_exclusive: axis 2"),
                       Error);
  CHECK_THROWS_WITH_AS(cumprod_exclusive(x, -3), doctest::Contains("[2,3]"), Error);
}

TEST_CASE("sort / argsort: values, stability on ties, both directions") {
  for (DType t : test::kBoth) {
    CAPTURE(dtype_name(t));
    Tape tape;
    Var x = make(tape, {2, 5}, t, {3, 1, 3, 1, 2, 0.5, -1, 4, 0, 2});
    CHECK(sort(x).value().to_vector() == std::vector<double>{1, 1, 2, 3, 3, -1, 0, 0.5, 2, 4});
    CHECK(sort(x, true).value().to_vector() ==
          std::vector<double>{3, 3, 2, 1, 1, 4, 2, 0.5, 0, -1});
    // Ties keep index order in both directions.
    Var a = argsort(x);
    CHECK(a.value().to_vector() == std::vector<double>{1, 3, 4, 0, 2, 1, 3, 0, 4, 2});
    CHECK(argsort(x, true).value().to_vector() ==
          std::vector<double>{0, 2, 4, 1, 3, 2, 4, 0, 3, 1});
    CHECK(a.dtype() == t);
    CHECK(std::string(tape.node(a.id).op->name) == "argsort");
  }
}

TEST_CASE("sort: the gradient goes back to the original positions; argsort has none") {
  for (DType t : test::kBoth) {
    CAPTURE(dtype_name(t));
    Tape tape;
    Var x = make(tape, {5}, t, {3, 1, 3, 1, 2}, true);
    // Ascending permutation [1, 3, 4, 0, 2]: x[1] gets g0, x[3] gets g1, ...
    CHECK(grad_of(sort(x), x, {10, 20, 30, 40, 50}) == std::vector<double>{40, 10, 50, 20, 30});
    tape.reset();
    Var y = make(tape, {5}, t, {3, 1, 3, 1, 2}, true);
    Var a = argsort(y);
    CHECK_FALSE(tape.requires_grad(a.id));
    tape.backward(a, Tensor::full(a.shape(), t, 1.0));
    CHECK_FALSE(y.grad().defined());
  }
}

TEST_CASE("sort: errors for NaN and for an input without a last axis") {
  Tape tape;
  Var x = make(tape, {2, 2}, DType::f32, {1, NAN, 0, 2});
  CHECK_THROWS_WITH_AS(sort(x), doctest::Contains("sort: NaN at position 1"), Error);
  CHECK_THROWS_WITH_AS(argsort(x), doctest::Contains("argsort: NaN"), Error);
  Var e = tape.input(Tensor::empty(Shape{2, 0}, DType::f32));
  CHECK_THROWS_WITH_AS(sort(e), doctest::Contains("sort: empty last axis in shape [2,0]"), Error);
}

TEST_CASE("gather_last: values with repeats, scatter-add backward") {
  for (DType t : test::kBoth) {
    CAPTURE(dtype_name(t));
    Tape tape;
    Var x = make(tape, {2, 3}, t, {10, 20, 30, 40, 50, 60}, true);
    Var idx = make(tape, {2, 4}, t, {2, 0, 2, 2, 1, 1, 0, 2});
    Var y = gather_last(x, idx);
    CHECK(y.shape() == Shape{2, 4});
    CHECK(y.value().to_vector() == std::vector<double>{30, 10, 30, 30, 50, 50, 40, 60});
    CHECK(grad_of(y, x, {1, 2, 3, 4, 5, 6, 7, 8}) == std::vector<double>{2, 0, 8, 7, 11, 8});
  }
}

TEST_CASE("gather_last: index and shape errors") {
  Tape tape;
  Var x = make(tape, {2, 3}, DType::f64, {1, 2, 3, 4, 5, 6});
  CHECK_THROWS_WITH_AS(gather_last(x, make(tape, {2, 1}, DType::f64, {0, 3})),
                       doctest::Contains("gather_last: index 3 at position 1"), Error);
  CHECK_THROWS_WITH_AS(gather_last(x, make(tape, {2, 1}, DType::f64, {0.5, 1})),
                       doctest::Contains("gather_last: index 0.5 at position 0"), Error);
  CHECK_THROWS_WITH_AS(gather_last(x, make(tape, {2, 1}, DType::f64, {-1, 1})),
                       doctest::Contains("not a whole number in [0, 3)"), Error);
  CHECK_THROWS_WITH_AS(gather_last(x, make(tape, {3, 1}, DType::f64, {0, 1, 2})),
                       doctest::Contains("gather_last: x [2,3] and idx [3,1]"), Error);
  CHECK_THROWS_WITH_AS(gather_last(x, make(tape, {2, 1}, DType::f32, {0, 1})),
                       doctest::Contains("gather_last: dtypes differ"), Error);
}

TEST_CASE("scatter_last: values, gather backward, and it undoes sort") {
  for (DType t : test::kBoth) {
    CAPTURE(dtype_name(t));
    Tape tape;
    Var src = make(tape, {2, 3}, t, {10, 20, 30, 40, 50, 60}, true);
    Var idx = make(tape, {2, 3}, t, {2, 0, 1, 0, 1, 2});
    Var y = scatter_last(src, idx);
    CHECK(y.value().to_vector() == std::vector<double>{20, 30, 10, 40, 50, 60});
    // dsrc[k] = g[idx[k]].
    CHECK(grad_of(y, src, {1, 2, 3, 4, 5, 6}) == std::vector<double>{3, 1, 2, 4, 5, 6});

    tape.reset();
    Var x = make(tape, {2, 5}, t, {0.3, -1, 2, 2, 0.1, 5, 4, 3, 2, 1});
    for (bool desc : {false, true}) {
      CHECK(scatter_last(sort(x, desc), argsort(x, desc)).value().to_vector() ==
            x.value().to_vector());
      CHECK(gather_last(x, argsort(x, desc)).value().to_vector() ==
            sort(x, desc).value().to_vector());
    }
  }
}

TEST_CASE("scatter_last: idx rows must be permutations of the same shape") {
  Tape tape;
  Var src = make(tape, {2, 3}, DType::f32, {1, 2, 3, 4, 5, 6});
  CHECK_THROWS_WITH_AS(scatter_last(src, make(tape, {2, 3}, DType::f32, {0, 1, 2, 1, 0, 1})),
                       doctest::Contains("scatter_last: row 1 of idx is not a permutation: index 1 "
                                         "repeats at position 2"),
                       Error);
  CHECK_THROWS_WITH_AS(scatter_last(src, make(tape, {2, 3}, DType::f32, {0, 1, 2, 0, 1, 3})),
                       doctest::Contains("scatter_last: index 3 at position 5"), Error);
  CHECK_THROWS_WITH_AS(
      scatter_last(src, make(tape, {3, 2}, DType::f32, {0, 1, 0, 1, 0, 1})),
      doctest::Contains("scatter_last: idx [3,2] must have the shape of src [2,3]"), Error);
}

TEST_CASE("scatter_last: permutation check on rows longer than one bitset block") {
  const int64_t n = 5000;
  std::vector<double> perm(static_cast<size_t>(n)), src(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    perm[size_t(k)] = double(n - 1 - k);
    src[size_t(k)] = double(k);
  }
  Tape tape;
  Var s = make(tape, {1, n}, DType::f64, src);
  Var y = scatter_last(s, make(tape, {1, n}, DType::f64, perm));
  CHECK(y.value().at(0) == double(n - 1));
  CHECK(y.value().at(n - 1) == 0.0);
  perm[10] = 4500;  // 4500 is also at position n - 1 - 4500 = 499
  CHECK_THROWS_WITH_AS(scatter_last(s, make(tape, {1, n}, DType::f64, perm)),
                       doctest::Contains("index 4500 repeats at position"), Error);
}

TEST_CASE("memory ops: no heap allocation in a steady-state step (DNC allocation weighting)") {
  for (DType t : test::kBoth) {
    CAPTURE(dtype_name(t));
    Tape tape;
    Tensor usage = Tensor::from(Shape{2, 6}, t, {0.2, 0.9, 0, 1, 0.5, 0.3, 1, 1, 0, 0.4, 0.4, 0.7});
    Tensor upstream = Tensor::full(Shape{2, 6}, t, 1.0);
    Tensor idx = Tensor::from(Shape{2, 2}, t, {0, 5, 3, 3});
    uint64_t allocs[3] = {0, 0, 0};
    std::vector<double> first;
    for (int step = 0; step < 3; ++step) {
      const uint64_t before = heap_allocations();
      tape.reset();
      Var u = tape.input(usage, true);
      Var su = sort(u);
      Var a = mul(add_scalar(neg(su), 1.0), cumprod_exclusive(su));
      Var alloc = scatter_last(a, argsort(u));
      Var g = gather_last(alloc, tape.input(idx));
      tape.backward(alloc, upstream);
      (void)g;
      allocs[step] = heap_allocations() - before;
      if (step == 0) first = u.grad().to_vector();
    }
    CHECK(allocs[1] == 0);
    CHECK(allocs[2] == 0);
    for (double v : first) CHECK(std::isfinite(v));
  }
}
