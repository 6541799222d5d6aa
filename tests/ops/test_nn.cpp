// NN ops (ops/nn.hpp): hand-computed softmax, log_softmax, cross_entropy, bce_with_logits,
// normalize and cosine_similarity values and gradients in float32 and float64, stability on large
// inputs, the masking promises of the losses (a masked position changes nothing), error messages,
// thread-count independence, allocation-free repeated steps, and the registered gradient checks.
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

const double kLn2 = std::log(2.0), kLn3 = std::log(3.0);

}  // namespace

TEST_CASE("softmax: hand values, rows sum to 1, stable for large inputs") {
  for (DType d : kBoth) {
    const std::string dtype = dtype_name(d);
    CAPTURE(dtype);
    Tape tape;
    // Row 0: [0, ln 2, ln 3] -> [1, 2, 3] / 6. Row 1: the same shifted by 1000 (overflows exp
    // without the max subtraction). Row 2: shifted by -1000 (underflows to 0/0 without it).
    Var x = tape.input(Tensor::from(Shape{3, 3}, d,
                                    {0, kLn2, kLn3, 1000, 1000 + kLn2, 1000 + kLn3, -1000,
                                     -1000 + kLn2, -1000 + kLn3}),
                       true);
    Var y = softmax(x);
    CHECK(y.shape() == Shape{3, 3});
    const double tol = d == DType::f32 ? 1e-4 : 1e-10;  // 1000 + ln 2 rounds in float32
    check_values(y.value(),
                 {1. / 6, 2. / 6, 3. / 6, 1. / 6, 2. / 6, 3. / 6, 1. / 6, 2. / 6, 3. / 6}, tol);
    // Upstream e_0 on row 0: gx = y * (e_0 - y_0) = [5, -2, -3] / 36; zero upstream elsewhere.
    Tensor g = Tensor::zeros(Shape{3, 3}, d);
    g.set(0, 1.0);
    tape.backward(y, g);
    check_values(x.grad(), {5. / 36, -2. / 36, -3. / 36, 0, 0, 0, 0, 0, 0}, tol_of(d));
  }
}

TEST_CASE("softmax: folded leading dims, one class, and a shift changes nothing") {
  Tape tape;
  Tensor t =
      Tensor::from(Shape{2, 2, 3}, DType::f64, {0.1, -2, 3, 4, 0, -1, 5, 5, 5, -0.5, 0.5, 2});
  Var y = softmax(tape.input(t));
  Tensor shifted = t.clone();
  for (int64_t i = 0; i < 3; ++i) shifted.set(i, t.at(i) + 7.5);
  Var ys = softmax(tape.input(shifted));
  check_values(ys.value(), y.value().to_vector(), 1e-12);
  for (int64_t r = 0; r < 4; ++r) {
    double s = 0;
    for (int64_t j = 0; j < 3; ++j) s += y.value().at(r * 3 + j);
    CHECK(s == doctest::Approx(1.0).epsilon(1e-14));
  }
  check_values(softmax(tape.input(Tensor::from(Shape{2, 1}, DType::f64, {-3, 40}))).value(), {1, 1},
               0);
}

TEST_CASE("log_softmax: hand values, equals log(softmax), stable, gradient") {
  for (DType d : kBoth) {
    const std::string dtype = dtype_name(d);
    CAPTURE(dtype);
    Tape tape;
    Var x =
        tape.input(Tensor::from(Shape{2, 3}, d, {0, kLn2, kLn3, -1000, -1000 + kLn2, 2000}), true);
    Var y = log_softmax(x);
    const double l6 = std::log(6.0);
    // Row 1: 2000 dominates: [-3000, -3000 + ln 2, 0] (and exp(-3000) underflows to 0).
    check_values(y.value(), {-l6, kLn2 - l6, kLn3 - l6, -3000, -3000 + kLn2, 0}, tol_of(d));
    // Upstream ones on row 0: gx = 1 - 3 * softmax = [1/2, 0, -1/2].
    tape.backward(y, Tensor::from(Shape{2, 3}, d, {1, 1, 1, 0, 0, 0}));
    std::vector<double> got = x.grad().to_vector();
    CHECK(got[0] == doctest::Approx(0.5).epsilon(tol_of(d)));
    CHECK(std::fabs(got[1]) < 1e-6);
    CHECK(got[2] == doctest::Approx(-0.5).epsilon(tol_of(d)));
    for (size_t i = 3; i < 6; ++i) CHECK(got[i] == 0.0);
  }
}

TEST_CASE("cross_entropy: hand values and gradient, with and without mask") {
  for (DType d : kBoth) {
    const std::string dtype = dtype_name(d);
    CAPTURE(dtype);
    Tape tape;
    // Row 0: softmax [1, 2, 3]/6, target 2 -> ln 2. Row 1: uniform, target 0 -> ln 3.
    Var logits = tape.input(Tensor::from(Shape{2, 3}, d, {0, kLn2, kLn3, 0, 0, 0}), true);
    Var targets = tape.input(Tensor::from(Shape{2}, d, {2, 0}));
    Var loss = cross_entropy(logits, targets);
    CHECK(loss.shape() == Shape{1});
    check_values(loss.value(), {(kLn2 + kLn3) / 2}, tol_of(d));
    tape.backward(loss);
    // (softmax - onehot) / 2.
    check_values(logits.grad(), {1. / 12, 2. / 12, -3. / 12, -2. / 6, 1. / 6, 1. / 6}, tol_of(d));

    Tape tape2;
    Var logits2 = tape2.input(Tensor::from(Shape{2, 3}, d, {0, kLn2, kLn3, 0, 0, 0}), true);
    Var masked = cross_entropy(logits2, tape2.input(Tensor::from(Shape{2}, d, {2, 0})),
                               tape2.input(Tensor::from(Shape{2}, d, {1, 0})));
    check_values(masked.value(), {kLn2}, tol_of(d));  // only row 0, divided by 1
    tape2.backward(masked);
    check_values(logits2.grad(), {1. / 6, 2. / 6, -3. / 6, 0, 0, 0}, tol_of(d));
  }
}

TEST_CASE("cross_entropy: [B, T, C] folds into rows; an all-ones mask equals no mask") {
  Tape tape;
  Tensor l = Tensor::from(Shape{2, 2, 3}, DType::f64, {1, 2, 3, -1, 0, 4, 0.5, 0.5, -2, 3, 1, 1});
  Tensor t = Tensor::from(Shape{2, 2}, DType::f64, {0, 2, 1, 0});
  Var a = cross_entropy(tape.input(l), tape.input(t));
  Var b = cross_entropy(tape.input(l.view(Shape{4, 3})), tape.input(t.view(Shape{4})));
  Var c = cross_entropy(tape.input(l), tape.input(t),
                        tape.input(Tensor::full(Shape{2, 2}, DType::f64, 1.0)));
  CHECK(a.value().at(0) == b.value().at(0));
  CHECK(a.value().at(0) == c.value().at(0));
  // By hand: mean over rows of logsumexp(row) - row[target].
  double want = 0;
  const double* p = l.data<double>();
  for (int r = 0; r < 4; ++r) {
    double s = 0;
    for (int j = 0; j < 3; ++j) s += std::exp(p[r * 3 + j]);
    want += std::log(s) - p[r * 3 + int(t.at(r))];
  }
  CHECK(a.value().at(0) == doctest::Approx(want / 4).epsilon(1e-13));
}

TEST_CASE("cross_entropy: a masked position changes neither the loss nor any gradient") {
  for (DType d : kBoth) {
    const std::string dtype = dtype_name(d);
    CAPTURE(dtype);
    const Tensor mask = Tensor::from(Shape{2, 2}, d, {1, 0, 1, 1});
    auto run = [&](double masked_logit, double masked_target) {
      Tape tape;
      Tensor l = Tensor::from(Shape{2, 2, 3}, d, {1, 2, 3, -1, 0, 4, 0.5, 0.5, -2, 3, 1, 1});
      Tensor t = Tensor::from(Shape{2, 2}, d, {0, 2, 1, 0});
      for (int j = 0; j < 3; ++j) l.set(3 + j, masked_logit * (j + 1));  // row 1 is masked
      t.set(1, masked_target);
      Var logits = tape.input(l, true);
      Var loss = cross_entropy(logits, tape.input(t), tape.input(mask));
      tape.backward(loss);
      std::vector<double> out = logits.grad().to_vector();
      out.push_back(loss.value().at(0));
      return out;
    };
    const std::vector<double> base = run(0.0, 2);
    CHECK(run(50.0, 0) == base);
    CHECK(run(-7.0, 1) == base);
    // Padding targets outside [0, C) and non-finite logits are never read at masked positions.
    CHECK(run(std::numeric_limits<double>::quiet_NaN(), -1) == base);
    CHECK(run(std::numeric_limits<double>::infinity(), 99) == base);
    for (int j = 3; j < 6; ++j) CHECK(base[size_t(j)] == 0.0);  // masked row: zero gradient
  }
}

TEST_CASE("cross_entropy: everything masked gives loss 0 and zero gradient") {
  Tape tape;
  Var logits = tape.input(Tensor::from(Shape{2, 2}, DType::f32, {1, 2, 3, 4}), true);
  Var loss = cross_entropy(logits, tape.input(Tensor::from(Shape{2}, DType::f32, {-1, 5})),
                           tape.input(Tensor::zeros(Shape{2}, DType::f32)));
  CHECK(loss.value().at(0) == 0.0);
  tape.backward(loss);
  check_values(logits.grad(), {0, 0, 0, 0}, 0);
}

TEST_CASE("cross_entropy: argument errors name the op, the position and the value") {
  Tape tape;
  Var l = tape.input(Tensor::zeros(Shape{2, 3}, DType::f32));
  auto targets = [&](std::vector<double> v) {
    return tape.input(Tensor::from(Shape{int64_t(v.size())}, DType::f32, v));
  };
  CHECK_THROWS_WITH_AS(cross_entropy(l, targets({0, 3})),
                       "cross_entropy: target 3 at position 1 is not a whole number in [0, 3)",
                       Error);
  CHECK_THROWS_WITH_AS(cross_entropy(l, targets({1.5, 0})),
                       "cross_entropy: target 1.5 at position 0 is not a whole number in [0, 3)",
                       Error);
  CHECK_THROWS_WITH_AS(cross_entropy(l, targets({-1, 0})),
                       "cross_entropy: target -1 at position 0 is not a whole number in [0, 3)",
                       Error);
  CHECK_THROWS_WITH_AS(cross_entropy(l, targets({0, 1}), targets({1, 0.5})),
                       "cross_entropy: mask value 0.5 at position 1 is not 0 or 1", Error);
  CHECK_THROWS_WITH_AS(cross_entropy(l, targets({0, 1, 2})),
                       "cross_entropy: targets [3] must have the logits' shape without the class "
                       "dim: logits [2,3] -> targets [2]",
                       Error);
  CHECK_THROWS_WITH_AS(cross_entropy(l, targets({0, 1}), targets({1, 1, 1})),
                       "cross_entropy: mask [3] must have the targets' shape [2]", Error);
  CHECK_THROWS_WITH_AS(cross_entropy(targets({0, 1}), targets({0, 1})),
                       "cross_entropy: logits must be [..., C] of rank 2 to 4 with C >= 1, got [2]",
                       Error);
  CHECK_THROWS_WITH_AS(
      cross_entropy(l, tape.input(Tensor::zeros(Shape{2}, DType::f64))),
      "cross_entropy: targets and mask must have the logits' dtype float32 (whole numbers travel "
      "as floats)",
      Error);
  // A failed call records nothing.
  const size_t nodes = tape.size();
  CHECK_THROWS_AS(cross_entropy(l, targets({0, 7})), Error);
  CHECK(tape.size() == nodes + 1);  // only the targets input leaf
}

TEST_CASE("bce_with_logits: hand values and gradient") {
  for (DType d : kBoth) {
    const std::string dtype = dtype_name(d);
    CAPTURE(dtype);
    Tape tape;
    // x = 0, t = 1: ln 2.  x = ln 3, t = 0: ln 3 + ln(4/3) = ln 4.
    Var x = tape.input(Tensor::from(Shape{1, 2}, d, {0, kLn3}), true);
    Var loss = bce_with_logits(x, tape.input(Tensor::from(Shape{1, 2}, d, {1, 0})));
    CHECK(loss.shape() == Shape{1});
    check_values(loss.value(), {1.5 * kLn2}, tol_of(d));
    tape.backward(loss);
    // (sigmoid(x) - t) / 2 = [(1/2 - 1) / 2, (3/4) / 2].
    check_values(x.grad(), {-0.25, 0.375}, tol_of(d));
  }
}

TEST_CASE("bce_with_logits: stable for large logits, soft targets") {
  for (DType d : kBoth) {
    const std::string dtype = dtype_name(d);
    CAPTURE(dtype);
    Tape tape;
    Var x = tape.input(Tensor::from(Shape{2, 2}, d, {100, -100, 100, -100}), true);
    Var right = bce_with_logits(x, tape.input(Tensor::from(Shape{2, 2}, d, {1, 0, 1, 0})));
    Var wrong = bce_with_logits(x, tape.input(Tensor::from(Shape{2, 2}, d, {0, 1, 0, 1})));
    CHECK(std::isfinite(right.value().at(0)));
    CHECK(right.value().at(0) < 1e-40);
    CHECK(wrong.value().at(0) == doctest::Approx(100.0).epsilon(tol_of(d)));
    tape.backward(wrong);
    check_values(x.grad(), {0.25, -0.25, 0.25, -0.25}, tol_of(d));
    // Soft target 0.5 at x = 0: ln 2.
    Var soft = bce_with_logits(tape.input(Tensor::zeros(Shape{1, 1}, d)),
                               tape.input(Tensor::full(Shape{1, 1}, d, 0.5)));
    check_values(soft.value(), {kLn2}, tol_of(d));
  }
}

TEST_CASE("bce_with_logits: per-element and per-row masks skip positions entirely") {
  auto run = [](const Tensor& l, const Tensor& t, const Tensor& m) {
    Tape tape;
    Var x = tape.input(l, true);
    Var loss = bce_with_logits(x, tape.input(t), tape.input(m));
    tape.backward(loss);
    std::vector<double> out = x.grad().to_vector();
    out.push_back(loss.value().at(0));
    return out;
  };
  const Tensor l = Tensor::from(Shape{2, 2}, DType::f64, {0, kLn3, 2, -1});
  const Tensor t = Tensor::from(Shape{2, 2}, DType::f64, {1, 0, 1, 1});
  // Per-element mask keeping elements 0 and 1: the hand case above.
  const Tensor em = Tensor::from(Shape{2, 2}, DType::f64, {1, 1, 0, 0});
  const std::vector<double> a = run(l, t, em);
  check_values(Tensor::from(Shape{5}, DType::f64, a), {-0.25, 0.375, 0, 0, 1.5 * kLn2}, 1e-12);
  // The per-row mask [1, 0] says the same; changing masked logits and targets changes nothing.
  const Tensor rm = Tensor::from(Shape{2}, DType::f64, {1, 0});
  CHECK(run(l, t, rm) == a);
  Tensor l2 = l.clone(), t2 = t.clone();
  l2.set(2, std::numeric_limits<double>::quiet_NaN());
  l2.set(3, 1e300);
  t2.set(2, 7);  // out of [0, 1], never read
  CHECK(run(l2, t2, rm) == a);
  CHECK(run(l2, t2, em) == a);
  // All masked: 0 with zero gradient.
  check_values(Tensor::from(Shape{5}, DType::f64, run(l, t, Tensor::zeros(Shape{2}, DType::f64))),
               {0, 0, 0, 0, 0}, 0);
}

TEST_CASE("bce_with_logits: argument errors") {
  Tape tape;
  Var l = tape.input(Tensor::zeros(Shape{2, 3}, DType::f32));
  Var t = tape.input(Tensor::from(Shape{2, 3}, DType::f32, {0, 1, 1, 0, 1.5, 0}));
  Var ok = tape.input(Tensor::zeros(Shape{2, 3}, DType::f32));
  CHECK_THROWS_WITH_AS(bce_with_logits(l, t),
                       "bce_with_logits: target 1.5 at position 4 is not in [0, 1]", Error);
  CHECK_THROWS_WITH_AS(bce_with_logits(l, tape.input(Tensor::zeros(Shape{3, 2}, DType::f32))),
                       "bce_with_logits: targets [3,2] must have the logits' shape [2,3]", Error);
  CHECK_THROWS_WITH_AS(bce_with_logits(l, ok, tape.input(Tensor::zeros(Shape{3}, DType::f32))),
                       "bce_with_logits: mask [3] must have the logits' shape [2,3] (per element) "
                       "or [2] (per row)",
                       Error);
  CHECK_THROWS_WITH_AS(
      bce_with_logits(l, ok, tape.input(Tensor::from(Shape{2}, DType::f32, {1, 2}))),
      "bce_with_logits: mask value 2 at position 1 is not 0 or 1", Error);
  // The bad target sits in a masked row: accepted.
  CHECK_NOTHROW(bce_with_logits(l, t, tape.input(Tensor::from(Shape{2}, DType::f32, {1, 0}))));
}

TEST_CASE("normalize: unit rows, eps inside the square root, zero rows stay finite") {
  for (DType d : kBoth) {
    const std::string dtype = dtype_name(d);
    CAPTURE(dtype);
    Tape tape;
    Var x = tape.input(Tensor::from(Shape{2, 2}, d, {3, 4, 0, 0}), true);
    Var y = normalize(x);
    const double s = std::sqrt(25.0 + 1e-6);
    check_values(y.value(), {3 / s, 4 / s, 0, 0}, tol_of(d));
    // Upstream [1, 0] on row 0: gx = (e_0 - y y_0) / s; on the zero row: g / sqrt(eps).
    tape.backward(y, Tensor::from(Shape{2, 2}, d, {1, 0, 0.5, -1}));
    const double y0 = 3 / s, y1 = 4 / s;
    check_values(x.grad(), {(1 - y0 * y0) / s, -y1 * y0 / s, 0.5 / 1e-3, -1 / 1e-3},
                 d == DType::f32 ? 1e-5 : 1e-10);
    // A larger eps shrinks the norm visibly: [3, 4] / sqrt(25 + 11) = [0.5, 2/3].
    check_values(normalize(tape.input(Tensor::from(Shape{2}, d, {3, 4})), 11.0).value(),
                 {0.5, 4.0 / 6.0}, tol_of(d));
  }
  Tape tape;
  Var x = tape.input(Tensor::zeros(Shape{2, 3}, DType::f32));
  CHECK_THROWS_WITH_AS(normalize(x, 0.0),
                       "normalize: eps must be positive and finite, got 0 (input [2,3])", Error);
  CHECK_THROWS_WITH_AS(normalize(tape.input(Tensor::zeros(Shape{2, 0}, DType::f32))),
                       "normalize: needs a non-empty last axis, got [2,0]", Error);
  CHECK_THROWS_WITH_AS(softmax(tape.input(Tensor::zeros(Shape{3, 0}, DType::f32))),
                       "softmax: needs a non-empty last axis, got [3,0]", Error);
}

TEST_CASE("cosine_similarity: parallel, opposite and orthogonal vectors; shape and errors") {
  for (DType d : kBoth) {
    const std::string dtype = dtype_name(d);
    CAPTURE(dtype);
    Tape tape;
    // keys [1, 2, 2], memory [1, 3, 2].
    Var keys = tape.input(Tensor::from(Shape{1, 2, 2}, d, {3, 4, 1, 0}));
    Var memory = tape.input(Tensor::from(Shape{1, 3, 2}, d, {6, 8, -3, -4, 0, 2}));
    Var c = cosine_similarity(keys, memory);
    CHECK(c.shape() == Shape{1, 2, 3});
    // dot / (sqrt(|k|^2 + eps) sqrt(|m|^2 + eps)): 1, -1, 0.8, 0.6, -0.6, 0 up to the eps shift.
    const double e = 1e-6, k0 = std::sqrt(25 + e), k1 = std::sqrt(1 + e);
    const double m0 = std::sqrt(100 + e), m1 = std::sqrt(25 + e), m2 = std::sqrt(4 + e);
    check_values(c.value(),
                 {50 / (k0 * m0), -25 / (k0 * m1), 8 / (k0 * m2), 6 / (k1 * m0), -3 / (k1 * m1), 0},
                 tol_of(d));
    CHECK(std::fabs(c.value().at(3) - 0.6) > 1e-7);  // the eps shift is really there
    CHECK(std::fabs(c.value().at(3) - 0.6) < 1e-6);
  }
  Tape tape;
  Var k = tape.input(Tensor::zeros(Shape{2, 3, 4}, DType::f32));
  CHECK_THROWS_WITH_AS(
      cosine_similarity(k, tape.input(Tensor::zeros(Shape{2, 5, 3}, DType::f32))),
      "cosine_similarity: keys [B, R, W] and memory [B, N, W] disagree on B or W: [2,3,4] and "
      "[2,5,3]",
      Error);
  CHECK_THROWS_WITH_AS(
      cosine_similarity(k, tape.input(Tensor::zeros(Shape{5, 4}, DType::f32))),
      "cosine_similarity: keys [B, R, W] and memory [B, N, W] must have rank 3, got [2,3,4] and "
      "[5,4]",
      Error);
}

TEST_CASE("nn: large inputs give the same results with 1 and 4 threads") {
  // 512 rows of 128: above the size where rows run in parallel.
  const Shape s{4, 128, 128};
  Tensor x = Tensor::empty(s, DType::f32), t = Tensor::empty(Shape{4, 128}, DType::f32);
  Tensor m = Tensor::empty(Shape{4, 128}, DType::f32), bt = Tensor::empty(s, DType::f32);
  Rng rng(7);
  for (int64_t i = 0; i < x.numel(); ++i) {
    x.set(i, rng.uniform(-4, 4));
    bt.set(i, double(rng.below(2)));
  }
  for (int64_t i = 0; i < t.numel(); ++i) {
    t.set(i, double(rng.below(128)));
    m.set(i, double(rng.below(4) != 0));
  }
  const Tensor up = Tensor::full(s, DType::f32, 0.25);
  auto run = [&](int threads) {
    ThreadScope scope(threads);
    Tape tape;
    Var vx = tape.input(x, true);
    std::vector<std::vector<double>> out;
    Var outs[] = {softmax(vx), log_softmax(vx), normalize(vx)};
    for (Var o : outs) {
      tape.backward(o, up, false);
      out.push_back(o.value().to_vector());
    }
    Var ce = cross_entropy(vx, tape.input(t), tape.input(m));
    tape.backward(ce, false);
    Var bce = bce_with_logits(vx, tape.input(bt), tape.input(m));
    tape.backward(bce, false);
    out.push_back({ce.value().at(0), bce.value().at(0)});
    out.push_back(vx.grad().to_vector());
    return out;
  };
  CHECK(run(1) == run(4));
}

TEST_CASE("nn: a repeated step allocates nothing") {
  ThreadScope one_thread(1);
  Tape tape;
  Rng rng(3);
  Tensor x = Tensor::empty(Shape{2, 3, 4}, DType::f32);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, rng.uniform(-2, 2));
  const Tensor targets = Tensor::from(Shape{2, 3}, DType::f32, {0, 3, 1, 2, 2, 0});
  const Tensor mask = Tensor::from(Shape{2, 3}, DType::f32, {1, 1, 0, 1, 0, 1});
  const Tensor labels = Tensor::from(Shape{2, 3, 3}, DType::f32,
                                     {1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 1, 0, 1, 1, 1, 0, 0, 0});
  const Tensor up = Tensor::full(Shape{1}, DType::f32, 1.0);
  auto step = [&] {
    tape.reset();
    Var vx = tape.input(x, true);
    Var sm = softmax(vx);
    Var ls = log_softmax(sm);
    Var nz = normalize(ls);
    Var cs = cosine_similarity(nz, vx);  // [2, 3, 3]
    Var ce = cross_entropy(nz, tape.input(targets), tape.input(mask));
    Var bce = bce_with_logits(cs, tape.input(labels), tape.input(mask));
    tape.backward(ce, up, false);
    tape.backward(bce, up, false);
  };
  step();
  step();
  const uint64_t before = heap_allocations();
  step();
  CHECK(heap_allocations() == before);
}

TEST_CASE("nn: registered gradient checks pass") {
  int cases = 0;
  for (const GradCase& c : all_grad_cases()) {
    if (c.op != "softmax" && c.op != "log_softmax" && c.op != "cross_entropy" &&
        c.op != "bce_with_logits" && c.op != "normalize" && c.name.rfind("bmm/cosine", 0) != 0)
      continue;
    CAPTURE(c.name);
    const GradCheckResult r = run_grad_case(c);
    CHECK_MESSAGE(r.passed, r.message);
    ++cases;
  }
  CHECK(cases == 27);
}

TEST_CASE("l2_norm: equals sqrt(sum_axis(x * x) + eps), values and gradients") {
  for (DType d : kBoth) {
    CAPTURE(dtype_name(d));
    Rng rng(5);
    const Tensor x = random_tensor(rng, Shape{2, 3, 7}).to(d);
    const Tensor up = random_tensor(rng, Shape{2, 3, 1}).to(d);
    Tensor value[2], grad[2];
    for (int fused = 0; fused < 2; ++fused) {
      Tape tape;
      Var vx = tape.input(x, true);
      Var y = fused ? l2_norm(vx, 1e-6) : sqrt(add_scalar(sum_axis(mul(vx, vx), -1, true), 1e-6));
      CHECK(y.shape() == Shape{2, 3, 1});
      tape.backward(y, up);
      value[fused] = y.value().clone();
      grad[fused] = vx.grad().clone();
    }
    check_values(value[1], value[0].to_vector(), tol_of(d));
    check_values(grad[1], grad[0].to_vector(), tol_of(d));
  }
  Tape tape;
  CHECK_THROWS_WITH(l2_norm(tape.input(Tensor::zeros(Shape{2, 3}, DType::f64)), 0.0),
                    doctest::Contains("l2_norm"));
}

TEST_CASE("lstm_cell: equals the LSTM update written with sigmoid, tanh, mul and add") {
  for (DType d : kBoth) {
    CAPTURE(dtype_name(d));
    const int64_t B = 3, H = 5;
    Rng rng(8);
    const Tensor gates = random_tensor(rng, Shape{B, 4 * H}, -3, 3).to(d);
    const Tensor c0 = random_tensor(rng, Shape{B, H}).to(d);
    const Tensor up = random_tensor(rng, Shape{B, 2 * H}).to(d);
    Tensor value[2], grad_gates[2], grad_c[2];
    for (int fused = 0; fused < 2; ++fused) {
      Tape tape;
      Var g = tape.input(gates, true), c = tape.input(c0, true);
      Var hc;
      if (fused) {
        hc = lstm_cell(g, c);
      } else {
        Var i = sigmoid(slice(g, 1, 0, H)), f = sigmoid(slice(g, 1, H, H));
        Var gg = tanh(slice(g, 1, 2 * H, H)), o = sigmoid(slice(g, 1, 3 * H, H));
        Var c1 = add(mul(f, c), mul(i, gg));
        hc = concat({mul(o, tanh(c1)), c1}, 1);
      }
      tape.backward(hc, up);
      value[fused] = hc.value().clone();
      grad_gates[fused] = g.grad().clone();
      grad_c[fused] = c.grad().clone();
    }
    const double tol = d == DType::f32 ? 1e-5 : 1e-12;  // float32: SIMD sigmoid/tanh vs libm
    check_values(value[1], value[0].to_vector(), tol);
    check_values(grad_gates[1], grad_gates[0].to_vector(), tol);
    check_values(grad_c[1], grad_c[0].to_vector(), tol);
  }
  Tape tape;
  CHECK_THROWS_WITH(lstm_cell(tape.input(Tensor::zeros(Shape{2, 7}, DType::f64)),
                              tape.input(Tensor::zeros(Shape{2, 2}, DType::f64))),
                    doctest::Contains("lstm_cell"));
}

TEST_CASE("lstm_cell and l2_norm: the same results with 1 and 4 threads") {
  // Sizes above the thresholds where rows and samples run in parallel.
  const int64_t B = 64, H = 128, N = 16, W = 64;
  Rng rng(12);
  const Tensor gates = random_tensor(rng, Shape{B, 4 * H}, -3, 3).to(DType::f32);
  const Tensor c0 = random_tensor(rng, Shape{B, H}).to(DType::f32);
  const Tensor mem = random_tensor(rng, Shape{B, N, W}).to(DType::f32);
  const Tensor w = random_tensor(rng, Shape{B, N}, 0, 1).to(DType::f32);
  const Tensor e = random_tensor(rng, Shape{B, W}, 0, 1).to(DType::f32);
  const Tensor v = random_tensor(rng, Shape{B, W}).to(DType::f32);
  auto run = [&](int threads) {
    ThreadScope scope(threads);
    Tape tape;
    Var vg = tape.input(gates, true), vc = tape.input(c0, true), vm = tape.input(mem, true);
    Var vw = tape.input(w, true), ve = tape.input(e, true), vv = tape.input(v, true);
    Var hc = lstm_cell(vg, vc);
    Var written = add(mul(vm, add_scalar(scale(outer(vw, ve), -1.0), 1.0)), outer(vw, vv));
    Var loss = add(add(sum(mul(hc, hc)), sum(l2_norm(written, 1e-6))), sum(written));
    tape.backward(loss);
    std::vector<std::vector<double>> out = {hc.value().to_vector(), written.value().to_vector()};
    for (Var x : {vg, vc, vm, vw, ve, vv}) out.push_back(x.grad().to_vector());
    return out;
  };
  CHECK(run(1) == run(4));
}
