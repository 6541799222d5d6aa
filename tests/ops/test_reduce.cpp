// Reduce ops (ops/reduce.hpp): hand-computed forward values in float32 and float64, shapes with
// and without keepdim, argmax routing of max's gradient, stability of logsumexp, error messages,
// and that every registered gradient check of the family passes.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
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

// [2, 3] = [[1, -2, 3], [4, 5, -6]]
Tensor two_by_three(DType d) { return Tensor::from(Shape{2, 3}, d, {1, -2, 3, 4, 5, -6}); }

}  // namespace

TEST_CASE("reduce: sum, mean and max of all elements") {
  for (DType d : kBoth) {
    CAPTURE(dtype_name(d));
    Tape tape;
    Var x = tape.input(two_by_three(d));
    Var s = sum(x), m = mean(x), mx = max(x);
    CHECK(s.shape() == Shape{1});
    CHECK(s.dtype() == d);
    check_values(s.value(), {5}, tol_of(d));
    check_values(m.value(), {5.0 / 6.0}, tol_of(d));
    check_values(mx.value(), {5}, tol_of(d));
  }
}

TEST_CASE("reduce: sum, mean and max along an axis, with and without keepdim") {
  for (DType d : kBoth) {
    CAPTURE(dtype_name(d));
    Tape tape;
    Var x = tape.input(two_by_three(d));
    Var s0 = sum_axis(x, 0), s1 = sum_axis(x, 1), s1k = sum_axis(x, -1, true);
    CHECK(s0.shape() == Shape{3});
    CHECK(s1.shape() == Shape{2});
    CHECK(s1k.shape() == Shape{2, 1});
    check_values(s0.value(), {5, 3, -3}, tol_of(d));
    check_values(s1.value(), {2, 3}, tol_of(d));
    check_values(s1k.value(), {2, 3}, tol_of(d));
    Var m0 = mean_axis(x, 0, true);
    CHECK(m0.shape() == Shape{1, 3});
    check_values(m0.value(), {2.5, 1.5, -1.5}, tol_of(d));
    check_values(mean_axis(x, 1).value(), {2.0 / 3.0, 1.0}, tol_of(d));
    Var x0 = max_axis(x, 0), x1 = max_axis(x, -1, true);
    CHECK(x0.shape() == Shape{3});
    CHECK(x1.shape() == Shape{2, 1});
    check_values(x0.value(), {4, 5, 3}, tol_of(d));
    check_values(x1.value(), {3, 5}, tol_of(d));
  }
}

TEST_CASE("reduce: middle axis of a rank-3 tensor, and rank 1 reducing to [1]") {
  // x[i,j,k] = 100 i + 10 j + k, shape [2, 3, 2].
  std::vector<double> v;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) v.push_back(100 * i + 10 * j + k);
  Tape tape;
  Var x = tape.input(Tensor::from(Shape{2, 3, 2}, DType::f64, v));
  Var s = sum_axis(x, 1);
  CHECK(s.shape() == Shape{2, 2});
  check_values(s.value(), {30, 33, 330, 333}, 1e-12);
  Var m = max_axis(x, 1, true);
  CHECK(m.shape() == Shape{2, 1, 2});
  check_values(m.value(), {20, 21, 120, 121}, 1e-12);
  Var l = logsumexp(x, 0);
  CHECK(l.shape() == Shape{3, 2});
  // logsumexp(a, a + 100) = a + 100 + log(1 + e^-100)
  check_values(l.value(), {100, 101, 110, 111, 120, 121}, 1e-12);

  Var r = tape.input(Tensor::from(Shape{4}, DType::f64, {1, 2, 3, 4}));
  CHECK(sum_axis(r, 0).shape() == Shape{1});
  CHECK(sum_axis(r, 0, true).shape() == Shape{1});
  check_values(mean_axis(r, -1).value(), {2.5}, 1e-12);
}

TEST_CASE("reduce: logsumexp values and stability") {
  for (DType d : kBoth) {
    CAPTURE(dtype_name(d));
    Tape tape;
    Var x = tape.input(Tensor::from(Shape{2, 3}, d, {1, 2, 3, 0, 0, 0}));
    check_values(logsumexp(x).value(), {3.4076059644443806, std::log(3.0)}, tol_of(d));
    check_values(
        logsumexp(x, 0).value(),
        {std::log(std::exp(1.0) + 1), std::log(std::exp(2.0) + 1), std::log(std::exp(3.0) + 1)},
        tol_of(d));
    // exp(1000) overflows both float32 and float64; the max shift must avoid it.
    Var big = tape.input(Tensor::from(Shape{1, 2}, d, {1000, 1000}));
    Var small = tape.input(Tensor::from(Shape{1, 2}, d, {-1000, -1000}));
    check_values(logsumexp(big).value(), {1000 + std::log(2.0)}, tol_of(d));
    check_values(logsumexp(small).value(), {-1000 + std::log(2.0)}, tol_of(d));
  }
  // A slice of all -inf gives -inf and no gradient (not NaN).
  Tape tape;
  const double inf = std::numeric_limits<double>::infinity();
  Var x = tape.input(Tensor::from(Shape{2, 2}, DType::f64, {-inf, -inf, 0, 0}), true);
  Var y = logsumexp(x);
  CHECK(y.value().at(0) == -inf);
  CHECK(y.value().at(1) == doctest::Approx(std::log(2.0)));
  tape.backward(y, Tensor::from(Shape{2}, DType::f64, {1, 1}));
  check_values(x.grad(), {0, 0, 0.5, 0.5}, 1e-12);
}

TEST_CASE("reduce: gradients of sum, mean and logsumexp") {
  Tape tape;
  Var x = tape.input(Tensor::from(Shape{2, 2}, DType::f64, {0, std::log(3.0), 1, 1}), true);
  tape.backward(mean(x));
  check_values(x.grad(), {0.25, 0.25, 0.25, 0.25}, 1e-12);
  tape.reset();
  x = tape.input(Tensor::from(Shape{2, 2}, DType::f64, {0, std::log(3.0), 1, 1}), true);
  tape.backward(sum(logsumexp(x)));  // row softmax: [1/4, 3/4], [1/2, 1/2]
  check_values(x.grad(), {0.25, 0.75, 0.5, 0.5}, 1e-12);
  tape.reset();
  x = tape.input(Tensor::from(Shape{2, 3}, DType::f64, {1, 2, 3, 4, 5, 6}), true);
  tape.backward(mean_axis(x, 0), Tensor::from(Shape{3}, DType::f64, {1, 2, 3}));
  check_values(x.grad(), {0.5, 1, 1.5, 0.5, 1, 1.5}, 1e-12);
}

TEST_CASE("reduce: max routes the gradient to the first argmax on ties") {
  for (DType d : kBoth) {
    CAPTURE(dtype_name(d));
    Tape tape;
    Var x = tape.input(Tensor::from(Shape{4}, d, {1, 3, 3, 2}), true);
    Var y = max(x);
    check_values(y.value(), {3}, tol_of(d));
    tape.backward(y);
    check_values(x.grad(), {0, 1, 0, 0}, tol_of(d));

    tape.reset();
    // Columns: (5, 5) ties -> row 0; (1, 7) -> row 1; (-2, -3) -> row 0.
    Var m = tape.input(Tensor::from(Shape{2, 3}, d, {5, 1, -2, 5, 7, -3}), true);
    Var z = max_axis(m, 0);
    check_values(z.value(), {5, 7, -2}, tol_of(d));
    tape.backward(z, Tensor::from(Shape{3}, d, {10, 20, 30}));
    check_values(m.grad(), {10, 0, 30, 0, 20, 0}, tol_of(d));
  }
}

TEST_CASE("reduce: error messages name the op and the shape") {
  Tape tape;
  Var x = tape.input(Tensor::zeros(Shape{2, 3}, DType::f32));
  CHECK_THROWS_WITH_AS(sum_axis(x, 2), "sum_axis: axis 2 out of range for shape [2,3]", Error);
  CHECK_THROWS_WITH_AS(mean_axis(x, -3), "mean_axis: axis -3 out of range for shape [2,3]", Error);
  CHECK_THROWS_WITH_AS(max_axis(x, 5, true), "max_axis: axis 5 out of range for shape [2,3]",
                       Error);
  CHECK_THROWS_WITH_AS(logsumexp(x, 2), "logsumexp: axis 2 out of range for shape [2,3]", Error);
  Var empty = tape.input(Tensor::zeros(Shape{2, 0}, DType::f32));
  CHECK_THROWS_WITH_AS(mean(empty), "mean: empty input of shape [2,0]", Error);
  CHECK_THROWS_WITH_AS(max(empty), "max: empty input of shape [2,0]", Error);
  CHECK_THROWS_WITH_AS(max_axis(empty, 1), "max_axis: axis 1 of shape [2,0] is empty", Error);
  CHECK_THROWS_WITH_AS(logsumexp(empty), "logsumexp: axis -1 of shape [2,0] is empty", Error);
  CHECK(sum(empty).value().at(0) == 0.0);
}

TEST_CASE("reduce: a repeated step allocates nothing") {
  ThreadScope one_thread(1);
  Tape tape;
  Tensor data = Tensor::from(Shape{2, 3, 4}, DType::f32, std::vector<double>(24, 0.5));
  data.set(7, 2.0);
  auto step = [&] {
    tape.reset();
    Var x = tape.input(data, true);
    Var y = sum(mean_axis(logsumexp(x, 1), 0)) + mean(max_axis(x, -1, true)) + max(sum_axis(x, 2));
    tape.backward(y);
  };
  step();
  step();
  const uint64_t before = heap_allocations();
  step();
  CHECK(heap_allocations() == before);
}

TEST_CASE("reduce: registered gradient checks pass") {
  check_registered_cases({"sum", "mean", "max", "sum_axis", "mean_axis", "max_axis", "logsumexp"},
                         3);
}
