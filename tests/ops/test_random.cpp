// Stochastic ops (ops/random.hpp): noise replay by (seed, step), dropout statistics and identity
// modes, Gumbel-softmax values recomputed from the saved noise, and the straight-through contract:
// sample mode and surrogate mode share the same noise and bit-identical gradients.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "engine/alloc_counter.hpp"
#include "ops/ops.hpp"
#include "tests/test_util.hpp"

using namespace memgrad;

namespace {

// Values of dropout(ones(shape), p) on a fresh tape with the given seed and step.
std::vector<double> dropout_ones(uint64_t seed, uint64_t step, int64_t n, double p,
                                 DType t = DType::f64) {
  Tape tape(seed);
  tape.set_step(step);
  return dropout(tape.input(Tensor::full(Shape{n}, t, 1.0)), p, true).value().to_vector();
}

std::vector<double> linspace(int64_t n, double lo, double hi) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = lo + (hi - lo) * double(i) / double(n - 1);
  return v;
}

}  // namespace

TEST_CASE("noise: same seed and step replay; another step, seed or op index differs") {
  const std::vector<double> a = dropout_ones(7, 3, 64, 0.5);
  CHECK(a == dropout_ones(7, 3, 64, 0.5));
  CHECK(a != dropout_ones(7, 4, 64, 0.5));
  CHECK(a != dropout_ones(8, 3, 64, 0.5));
  // Two stochastic ops in one step draw different noise; after reset() the step replays.
  Tape tape(7);
  tape.set_step(3);
  Var x = tape.input(Tensor::full(Shape{64}, DType::f64, 1.0));
  const std::vector<double> first = dropout(x, 0.5, true).value().to_vector();
  const std::vector<double> second = dropout(x, 0.5, true).value().to_vector();
  CHECK(first == a);
  CHECK(second != first);
  tape.reset();
  Var x2 = tape.input(Tensor::full(Shape{64}, DType::f64, 1.0));
  CHECK(dropout(x2, 0.5, true).value().to_vector() == a);
}

TEST_CASE("dropout: kept elements scaled by 1/(1-p); dropped fraction close to p") {
  for (DType t : test::kBoth) {
    CAPTURE(dtype_name(t));
    const double p = 0.3;
    const int64_t n = 200000;
    const std::vector<double> v = dropout_ones(1, 0, n, p, t);
    const double kept = t == DType::f32 ? double(float(1.0 / (1.0 - p))) : 1.0 / (1.0 - p);
    int64_t zeros = 0, bad = 0;
    for (double e : v) {
      if (e == 0.0)
        ++zeros;
      else if (e != kept)
        ++bad;
    }
    CHECK(bad == 0);
    // Binomial standard deviation of the fraction: sqrt(0.21 / 200000) ~ 0.001.
    CHECK(std::fabs(double(zeros) / double(n) - p) < 0.005);
  }
}

TEST_CASE("dropout: identity when not training or p == 0; backward multiplies by the mask") {
  for (DType t : test::kBoth) {
    CAPTURE(dtype_name(t));
    Tape tape(5);
    Var x = tape.input(Tensor::from(Shape{2, 3}, t, {1, -2, 3, -4, 5, -6}), true);
    Var eval = dropout(x, 0.5, false);
    CHECK(eval.value().to_vector() == x.value().to_vector());
    Var zero_p = dropout(x, 0.0, true);
    CHECK(zero_p.value().to_vector() == x.value().to_vector());
    tape.backward(eval, Tensor::from(Shape{2, 3}, t, {1, 2, 3, 4, 5, 6}));
    CHECK(x.grad().to_vector() == std::vector<double>{1, 2, 3, 4, 5, 6});

    tape.reset();
    Var x2 = tape.input(Tensor::from(Shape{2, 3}, t, {1, -2, 3, -4, 5, -6}), true);
    Var y = dropout(x2, 0.5, true);
    tape.backward(y, Tensor::full(Shape{2, 3}, t, 3.0));
    // With p = 0.5 the mask is 0 or 2: y = 2 x or 0, and dL/dx = 3 * mask.
    const std::vector<double> xv = x2.value().to_vector(), yv = y.value().to_vector(),
                              gv = x2.grad().to_vector();
    for (size_t i = 0; i < xv.size(); ++i) {
      const double mask = yv[i] / xv[i];
      CHECK((mask == 0.0 || mask == 2.0));
      CHECK(gv[i] == 3.0 * mask);
    }
  }
}

TEST_CASE("dropout: p outside [0, 1) is an error naming the op") {
  Tape tape;
  Var x = tape.input(Tensor::full(Shape{2, 2}, DType::f32, 1.0));
  CHECK_THROWS_WITH_AS(dropout(x, 1.0, true), doctest::Contains("dropout: p = 1 is not in [0, 1)"),
                       Error);
  CHECK_THROWS_WITH_AS(dropout(x, -0.1, false), doctest::Contains("[2,2]"), Error);
}

TEST_CASE("gumbel_softmax soft: rows sum to 1 and equal softmax((logits + saved noise) / tau)") {
  for (DType t : test::kBoth) {
    CAPTURE(dtype_name(t));
    Tape tape(11);
    const double tau = 0.7;
    Var l = tape.input(Tensor::from(Shape{2, 3}, t, {0.5, -1, 2, 0, 0, 0}));
    Var y = gumbel_softmax(l, tau, false);
    const std::vector<double> yv = y.value().to_vector();
    const Tensor& saved = tape.saved(y.id);
    const double tol = t == DType::f32 ? 1e-6 : 1e-14;
    for (int r = 0; r < 2; ++r) {
      double sum = 0, z[3], zs = 0;
      for (int k = 0; k < 3; ++k) {
        sum += yv[size_t(r * 3 + k)];
        z[k] = std::exp((l.value().at(r * 3 + k) + saved.at(r * 3 + k)) / tau);
        zs += z[k];
      }
      CHECK(std::fabs(sum - 1.0) < tol);
      for (int k = 0; k < 3; ++k) CHECK(std::fabs(yv[size_t(r * 3 + k)] - z[k] / zs) < tol);
    }
  }
}

TEST_CASE("gumbel_softmax: the noise is Gumbel(0, 1) (mean ~ Euler's gamma, finite)") {
  Tape tape(3);
  const int64_t n = 100000;
  Var y = gumbel_softmax(tape.input(Tensor::zeros(Shape{n, 1}, DType::f64)), 1.0, false);
  const Tensor& saved = tape.saved(y.id);
  double mean = 0;
  int64_t non_finite = 0;
  for (int64_t i = 0; i < n; ++i) {
    non_finite += !std::isfinite(saved.at(i));
    mean += saved.at(i);
  }
  CHECK(non_finite == 0);
  mean /= double(n);
  // Standard deviation pi / sqrt(6) ~ 1.28: the mean's standard error is ~ 0.004.
  CHECK(std::fabs(mean - 0.5772156649) < 0.02);
  // A one-element row is always exactly 1.
  CHECK(y.value().at(0) == 1.0);
}

TEST_CASE("gumbel_softmax hard: exact one-hot of the soft argmax; same gradient as surrogate") {
  for (DType t : test::kBoth) {
    CAPTURE(dtype_name(t));
    const Shape s{4, 5};
    const std::vector<double> logits = linspace(20, -2, 2.5);
    const Tensor upstream = Tensor::from(s, t, linspace(20, 1, -1.3));
    std::vector<double> soft_y, hard_y, surr_y, soft_g, hard_g, surr_g;
    auto run = [&](bool hard, StraightThrough mode, std::vector<double>& yv,
                   std::vector<double>& gv) {
      Tape tape(42);
      tape.set_step(9);
      Var l = tape.input(Tensor::from(s, t, logits), true);
      Var y = gumbel_softmax(l, 0.5, hard, mode);
      tape.backward(y, upstream);
      yv = y.value().to_vector();
      gv = l.grad().to_vector();
    };
    run(false, StraightThrough::sample, soft_y, soft_g);
    run(true, StraightThrough::sample, hard_y, hard_g);
    run(true, StraightThrough::surrogate, surr_y, surr_g);
    CHECK(surr_y == soft_y);  // surrogate mode forward is y_soft, same noise
    CHECK(hard_g == surr_g);  // bit-identical gradients
    CHECK(hard_g == soft_g);
    for (int r = 0; r < 4; ++r) {
      int best = 0, ones = 0;
      for (int k = 0; k < 5; ++k) {
        const double h = hard_y[size_t(r * 5 + k)];
        CHECK((h == 0.0 || h == 1.0));
        ones += h == 1.0;
        if (soft_y[size_t(r * 5 + k)] > soft_y[size_t(r * 5 + best)]) best = k;
      }
      CHECK(ones == 1);
      CHECK(hard_y[size_t(r * 5 + best)] == 1.0);
    }
    // The gradient is not trivially zero.
    double norm = 0;
    for (double g : hard_g) norm += g * g;
    CHECK(norm > 1e-6);
  }
}

TEST_CASE("gumbel_softmax: argument errors") {
  Tape tape;
  Var l = tape.input(Tensor::zeros(Shape{2, 3}, DType::f64));
  CHECK_THROWS_WITH_AS(gumbel_softmax(l, 0.0, false),
                       doctest::Contains("gumbel_softmax: temperature 0 must be > 0"), Error);
  Var e = tape.input(Tensor::empty(Shape{2, 0}, DType::f64));
  CHECK_THROWS_WITH_AS(gumbel_softmax(e, 1.0, true), doctest::Contains("[2,0]"), Error);
}

TEST_CASE("bernoulli_st: exact 0/1 samples with mean p, identity gradient as in surrogate mode") {
  for (DType t : test::kBoth) {
    CAPTURE(dtype_name(t));
    const int64_t n = 100000;
    Tape tape(2);
    Var p = tape.input(Tensor::full(Shape{n}, t, 0.25), true);
    Var z = bernoulli_st(p);
    int64_t ones = 0, other = 0;
    for (double v : z.value().to_vector()) {
      ones += v == 1.0;
      other += v != 0.0 && v != 1.0;
    }
    CHECK(other == 0);
    // Standard error sqrt(0.1875 / 1e5) ~ 0.0014.
    CHECK(std::fabs(double(ones) / double(n) - 0.25) < 0.007);

    // Sample vs surrogate mode on the same noise: forward z vs p, bit-identical gradients.
    const Shape s{3, 4};
    const std::vector<double> probs = linspace(12, 0.0, 1.0);  // includes exact 0 and 1
    const Tensor up = Tensor::from(s, t, linspace(12, -1, 2));
    std::vector<double> g_sample, g_surr, z_sample, z_surr;
    for (StraightThrough mode : {StraightThrough::sample, StraightThrough::surrogate}) {
      Tape tp(5);
      Var pv = tp.input(Tensor::from(s, t, probs), true);
      Var zv = bernoulli_st(pv, mode);
      tp.backward(zv, up);
      (mode == StraightThrough::sample ? z_sample : z_surr) = zv.value().to_vector();
      (mode == StraightThrough::sample ? g_sample : g_surr) = pv.grad().to_vector();
    }
    CHECK(g_sample == g_surr);
    CHECK(g_sample == up.to_vector());
    CHECK(z_surr == Tensor::from(s, t, probs).to_vector());
    CHECK(z_sample[0] == 0.0);   // p = 0 never fires
    CHECK(z_sample[11] == 1.0);  // p = 1 always fires
    for (double v : z_sample) CHECK((v == 0.0 || v == 1.0));
  }
}

TEST_CASE("straight-through ops, most_likely mode: the distribution's mode, the same backward") {
  for (DType t : test::kBoth) {
    CAPTURE(dtype_name(t));
    // bernoulli_st: z = [p > 0.5] whatever the seed and step; p = 0.5 itself does not fire.
    const Shape s{2, 5};
    const std::vector<double> probs = {0.0, 0.1, 0.49, 0.5, 0.51, 0.7, 0.9, 1.0, 0.3, 0.6};
    const Tensor up = Tensor::from(s, t, linspace(10, -1, 2));
    for (uint64_t seed : {1u, 7u}) {
      Tape tape(seed);
      tape.set_step(int64_t(seed) * 3);
      Var p = tape.input(Tensor::from(s, t, probs), true);
      Var z = bernoulli_st(p, StraightThrough::most_likely);
      tape.backward(z, up);
      const std::vector<double> zv = z.value().to_vector();
      for (size_t i = 0; i < probs.size(); ++i) CHECK(zv[i] == (probs[i] > 0.5 ? 1.0 : 0.0));
      CHECK(p.grad().to_vector() == up.to_vector());  // the identity, as in sample mode
    }
    // gumbel_softmax: hard = one-hot(argmax logits), soft = softmax(logits / tau), no noise;
    // the gradient is the soft output's (the same backward as the other modes).
    const Shape g{3, 4};
    const std::vector<double> logits = {0.3,  -1.0, 2.0,  0.1,  1.5,  1.4,
                                        -0.2, 0.0,  -3.0, -2.0, -2.5, -1.9};
    const Tensor gup = Tensor::from(g, t, linspace(12, 1, -1.3));
    std::vector<double> soft, hard_g, soft_g;
    for (bool hard : {false, true}) {
      Tape tape(11);
      Var l = tape.input(Tensor::from(g, t, logits), true);
      Var y = gumbel_softmax(l, 0.5, hard, StraightThrough::most_likely);
      tape.backward(y, gup);
      const std::vector<double> yv = y.value().to_vector();
      for (int r = 0; r < 3; ++r) {
        int best = 0;
        double norm = 0;
        for (int k = 0; k < 4; ++k) {
          if (logits[size_t(r * 4 + k)] > logits[size_t(r * 4 + best)]) best = k;
          norm += std::exp(logits[size_t(r * 4 + k)] / 0.5);
        }
        for (int k = 0; k < 4; ++k) {
          const size_t i = size_t(r * 4 + k);
          if (hard)
            CHECK(yv[i] == (k == best ? 1.0 : 0.0));
          else
            CHECK(yv[i] == doctest::Approx(std::exp(logits[i] / 0.5) / norm).epsilon(1e-5));
        }
      }
      (hard ? hard_g : soft_g) = l.grad().to_vector();
    }
    CHECK(hard_g == soft_g);
  }
}

TEST_CASE("bernoulli_st: probabilities outside [0, 1] are an error naming the op") {
  Tape tape;
  Var p = tape.input(Tensor::from(Shape{1, 3}, DType::f32, {0.1, 1.5, 0.2}));
  CHECK_THROWS_WITH_AS(
      bernoulli_st(p),
      doctest::Contains("bernoulli_st: probability 1.5 at position 1 of probs [1,3]"), Error);
}

TEST_CASE("random ops: no heap allocation in a steady-state step") {
  for (DType t : test::kBoth) {
    CAPTURE(dtype_name(t));
    Tape tape(1);
    const Tensor x = Tensor::from(Shape{2, 4}, t, linspace(8, 0.05, 0.95));
    const Tensor up = Tensor::full(Shape{2, 4}, t, 1.0);
    uint64_t allocs[3] = {0, 0, 0};
    for (int step = 0; step < 3; ++step) {
      const uint64_t before = heap_allocations();
      tape.reset();
      tape.set_step(uint64_t(step));
      Var v = tape.input(x, true);
      Var a = dropout(v, 0.3, true);
      Var b = gumbel_softmax(a, 0.8, true);
      Var c = bernoulli_st(v);
      tape.backward(add(b, c), up);
      allocs[step] = heap_allocations() - before;
    }
    CHECK(allocs[1] == 0);
    CHECK(allocs[2] == 0);
  }
}
