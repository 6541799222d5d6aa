// Elementwise ops (ops/elementwise.hpp): the broadcast loops (merged runs, ops/broadcast.hpp) and
// their gradients against a naive element-by-element reference on many shape pairs, gradients
// that are overwritten on first use and accumulated afterwards (Tape::grad_for_write), where()
// with a broadcast mask, and the float32 SIMD exp/sigmoid/tanh of ops/vec_math.hpp against libm.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "engine/gradcheck.hpp"
#include "ops/ops.hpp"
#include "ops/vec_math.hpp"

using namespace memgrad;

namespace {

// The index of output element o in an input of shape `in`, broadcast numpy-style to `out`.
int64_t source_index(const Shape& in, const Shape& out, int64_t o) {
  int64_t idx = 0, stride = 1;
  for (int d = out.rank - 1, di = in.rank - 1; d >= 0; --d, --di) {
    const int64_t coord = o % out[d];
    o /= out[d];
    if (di >= 0) {
      if (in[di] != 1) idx += coord * stride;
      stride *= in[di];
    }
  }
  return idx;
}

struct Pair {
  Shape a, b;
};

// Shapes that exercise every kind of run: same shape, row and column broadcasts, a scalar, both
// inputs stretched in different dims, size-1 dims in the middle, leading dims missing.
const Pair kPairs[] = {
    {{3, 4}, {3, 4}},       {{2, 3, 4}, {4}},       {{4}, {2, 3, 4}},
    {{5, 3}, {5, 1}},       {{5, 1}, {5, 3}},       {{2, 3}, {1}},
    {{1}, {2, 3}},          {{3, 1}, {1, 4}},       {{2, 3, 1}, {2, 1, 5}},
    {{2, 1, 4}, {2, 3, 4}}, {{2, 3, 4}, {2, 3, 1}}, {{2, 1, 3, 1}, {1, 4, 1, 5}},
    {{1, 1}, {1, 1}},       {{6, 1, 1}, {6, 5, 7}}, {{2, 3, 4, 5}, {3, 1, 5}},
};

}  // namespace

TEST_CASE("binary ops: broadcast values and gradients match a naive reference") {
  for (const Pair& p : kPairs) {
    CAPTURE(p.a);
    CAPTURE(p.b);
    Rng rng(7);
    const Tensor ta = random_tensor(rng, p.a), tb = random_tensor(rng, p.b, 0.5, 2.0);
    Tape tape;
    Var a = tape.input(ta, true), b = tape.input(tb, true);
    Var z = div(mul(a, b), b);  // two broadcast ops in a row; a's gradient is b-independent
    Var w = sub(add(a, b), mul(a, b));
    const Shape out = w.shape();
    Tensor up = random_tensor(rng, out);
    // Loss = sum(up * (w + z)): backward of both branches.
    tape.backward(add(w, z), up);
    const Tensor ga = a.grad(), gb = b.grad();
    std::vector<double> want_a(size_t(ta.numel()), 0.0), want_b(size_t(tb.numel()), 0.0);
    for (int64_t o = 0; o < out.numel(); ++o) {
      const int64_t i = source_index(p.a, out, o), j = source_index(p.b, out, o);
      const double av = ta.at(i), bv = tb.at(j), u = up.at(o);
      CHECK(w.value().at(o) == doctest::Approx(av + bv - av * bv).epsilon(1e-12));
      CHECK(z.value().at(o) == doctest::Approx(av).epsilon(1e-12));
      // d/da (a + b - ab + ab/b) = 2 - b;  d/db = 1 - a + (a/b - ab/b^2) = 1 - a
      want_a[size_t(i)] += u * (2 - bv);
      want_b[size_t(j)] += u * (1 - av);
    }
    for (int64_t i = 0; i < ta.numel(); ++i)
      CHECK(ga.at(i) == doctest::Approx(want_a[size_t(i)]).epsilon(1e-10));
    for (int64_t j = 0; j < tb.numel(); ++j)
      CHECK(gb.at(j) == doctest::Approx(want_b[size_t(j)]).epsilon(1e-10));
  }
}

TEST_CASE("gradients: first use overwrites, later uses add, the same input twice adds") {
  for (DType dt : {DType::f32, DType::f64}) {
    CAPTURE(dtype_name(dt));
    Tape tape;
    Var x = tape.input(Tensor::from(Shape{2, 3}, dt, {1, 2, 3, -1, -2, -3}), true);
    // x feeds mul(x, x), a tanh, a reshape and a matmul: each kind of backward contributes to
    // x's gradient, the first one overwriting and the rest adding.
    Var w = tape.input(Tensor::from(Shape{3, 1}, dt, {0.5, -1, 2}), true);
    Var y =
        add(add(sum(mul(x, x)), sum(tanh(x))), add(sum(reshape(x, Shape{6})), sum(matmul(x, w))));
    tape.backward(y);
    const std::vector<double> xs = {1, 2, 3, -1, -2, -3}, ws = {0.5, -1, 2};
    for (int64_t i = 0; i < 6; ++i) {
      const double v = xs[size_t(i)], t = std::tanh(v);
      CHECK(x.grad().at(i) ==
            doctest::Approx(2 * v + (1 - t * t) + 1 + ws[size_t(i % 3)]).epsilon(1e-6));
    }
    for (int64_t k = 0; k < 3; ++k)
      CHECK(w.grad().at(k) == doctest::Approx(0.0));  // x's column sums
  }
}

TEST_CASE("where: broadcast masks, values and gradients") {
  Rng rng(3);
  const Shape s{4, 3, 5};
  const Tensor ta = random_tensor(rng, s), tb = random_tensor(rng, s),
               tb_row = random_tensor(rng, Shape{5});
  for (const Shape& ms : {Shape{4, 1, 1}, Shape{4, 3, 5}, Shape{1, 3, 1}, Shape{5}}) {
    CAPTURE(ms);
    Tensor mask = Tensor::zeros(ms, DType::f64);
    for (int64_t i = 0; i < mask.numel(); ++i) mask.set(i, i % 3 == 1 ? 0.0 : 1.0);
    for (bool row_b : {false, true}) {
      CAPTURE(row_b);
      Tape tape;
      Var m = tape.input(mask), a = tape.input(ta, true), b = tape.input(row_b ? tb_row : tb, true);
      Var z = where(m, a, b);
      Tensor up = random_tensor(rng, s);
      tape.backward(z, up);
      std::vector<double> want_b(size_t(b.value().numel()), 0.0);
      for (int64_t o = 0; o < s.numel(); ++o) {
        const bool on = mask.at(source_index(ms, s, o)) != 0;
        const int64_t j = source_index(b.shape(), s, o);
        CHECK(z.value().at(o) == (on ? ta.at(o) : b.value().at(j)));
        CHECK(a.grad().at(o) == (on ? up.at(o) : 0.0));
        if (!on) want_b[size_t(j)] += up.at(o);
      }
      for (int64_t j = 0; j < b.value().numel(); ++j)
        CHECK(b.grad().at(j) == doctest::Approx(want_b[size_t(j)]).epsilon(1e-12));
    }
  }
}

TEST_CASE("where: the same node as a and b gets the whole gradient") {
  for (const Shape& ms : {Shape{4, 1, 1}, Shape{4, 3, 5}}) {
    CAPTURE(ms);
    Rng rng(9);
    Tensor mask = Tensor::zeros(ms, DType::f64);
    for (int64_t i = 0; i < mask.numel(); ++i) mask.set(i, i % 2 ? 0.0 : 1.0);
    Tape tape;
    Var x = tape.input(random_tensor(rng, Shape{4, 3, 5}), true);
    const Tensor up = random_tensor(rng, Shape{4, 3, 5});
    tape.backward(where(tape.input(mask), x, x), up);
    for (int64_t i = 0; i < up.numel(); ++i) CHECK(x.grad().at(i) == up.at(i));
  }
}

TEST_CASE("vec_math: float32 exp, sigmoid and tanh within a few ulp of libm") {
  const auto exp4 = [](vec::f32v v) { return vec::exp_clamped(v); };
  const auto sig4 = [](vec::f32v v) { return vec::sigmoid(v); };
  const auto tanh4 = [](vec::f32v v) { return vec::tanh(v); };
  double worst_exp = 0, worst_sig = 0, worst_tanh = 0;
  for (double x = -40; x < 40; x += 0.00137) {
    const float f = float(x);
    const double xf = f, e = std::exp(xf), s = 1 / (1 + std::exp(-xf)), t = std::tanh(xf);
    worst_exp = std::max(worst_exp, std::fabs(vec::one(f, exp4) - e) / e);
    worst_sig = std::max(worst_sig, std::fabs(vec::one(f, sig4) - s) / s);
    if (t != 0) worst_tanh = std::max(worst_tanh, std::fabs(vec::one(f, tanh4) - t) / std::fabs(t));
  }
  const double ulp = 5.96e-8;  // 2^-24, half a float32 ulp at 1
  CHECK(worst_exp < 3 * ulp);
  CHECK(worst_sig < 4 * ulp);
  CHECK(worst_tanh < 4 * ulp);
  // Saturation and edge values.
  CHECK(vec::one(-1e9f, sig4) >= 0.0f);
  CHECK(vec::one(-1e9f, sig4) < 1e-38f);
  CHECK(vec::one(1e9f, sig4) == 1.0f);
  CHECK(vec::one(1e9f, tanh4) == 1.0f);
  CHECK(vec::one(-1e9f, tanh4) == -1.0f);
  CHECK(vec::one(0.0f, tanh4) == 0.0f);
  CHECK(vec::one(-1e-30f, tanh4) == -1e-30f);
  CHECK(vec::one(0.0f, sig4) == 0.5f);
}

TEST_CASE("vec_math: float32 softplus within a few ulp of libm, also far below 0") {
  const auto sp = [](vec::f32v v) { return vec::softplus(v); };
  double worst = 0;
  for (double x = -80; x < 80; x += 0.00371) {
    const float f = float(x);
    const double xf = f, want = std::max(xf, 0.0) + std::log1p(std::exp(-std::fabs(xf)));
    worst = std::max(worst, std::fabs(vec::one(f, sp) - want) / want);
  }
  CHECK(worst < 4 * 5.96e-8);
  CHECK(vec::one(0.0f, sp) == doctest::Approx(std::log(2.0)).epsilon(1e-7));
  CHECK(vec::one(1e9f, sp) == 1e9f);
  CHECK(vec::one(-1e9f, sp) >= 0.0f);
}

TEST_CASE("sigmoid, tanh and softplus ops in float32: every length (SIMD groups, tail) agree") {
  for (int64_t n : {1, 3, 4, 5, 8, 9, 13, 16, 17}) {
    CAPTURE(n);
    Tensor t = Tensor::zeros(Shape{n}, DType::f32);
    for (int64_t i = 0; i < n; ++i) t.set(i, -3.0 + 0.7 * double(i));
    Tape tape;
    Var x = tape.input(t);
    Var s = sigmoid(x), h = tanh(x), p = softplus(x);
    for (int64_t i = 0; i < n; ++i) {
      const double v = t.at(i);
      CHECK(s.value().at(i) == doctest::Approx(1 / (1 + std::exp(-v))).epsilon(1e-6));
      CHECK(h.value().at(i) == doctest::Approx(std::tanh(v)).epsilon(1e-6));
      CHECK(p.value().at(i) == doctest::Approx(std::log1p(std::exp(v))).epsilon(1e-6));
    }
  }
}
