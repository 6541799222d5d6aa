#include <doctest/doctest.h>

#include <cmath>

#include "engine/optimizer.hpp"

using namespace memgrad;

namespace {
// One parameter w = [1, -2] with gradient g = [0.5, 0.1].
Parameter& setup(ParameterSet& ps) {
  Parameter& w = ps.add("w", Shape{2});
  w.value.copy_from(Tensor::from(Shape{2}, DType::f64, {1.0, -2.0}));
  w.grad.copy_from(Tensor::from(Shape{2}, DType::f64, {0.5, 0.1}));
  return w;
}
}  // namespace

TEST_CASE("SGD with momentum") {
  ParameterSet ps(DType::f64);
  Parameter& w = setup(ps);
  Sgd sgd(ps, 0.1, 0.9);
  sgd.step();  // v = g; w -= 0.1 g
  CHECK(w.value.at(0) == doctest::Approx(0.95));
  sgd.step();  // v = 0.9 g + g = 1.9 g
  CHECK(w.value.at(0) == doctest::Approx(0.95 - 0.1 * 1.9 * 0.5));
}

TEST_CASE("Adam's first step moves every weight by about lr") {
  ParameterSet ps(DType::f64);
  Parameter& w = setup(ps);
  Adam adam(ps, 0.01);
  adam.step();
  // Bias-corrected m = g, v = g^2: step = lr * g / (|g| + eps).
  CHECK(w.value.at(0) == doctest::Approx(1.0 - 0.01 * 0.5 / (0.5 + 1e-8)));
  CHECK(w.value.at(1) == doctest::Approx(-2.0 - 0.01 * 0.1 / (0.1 + 1e-8)));
  adam.step();  // same gradient again: m and v stay g and g^2 after correction
  CHECK(w.value.at(0) == doctest::Approx(1.0 - 0.02).epsilon(1e-6));
  CHECK(adam.state().size() == 2);
}

TEST_CASE("Adam in float32 and float64 agree on every element (SIMD groups and the tail)") {
  // 1027 weights: groups of four plus a tail of three. The float32 update (SIMD where available)
  // must match the float64 one to float precision on every element, three steps in a row.
  ParameterSet p32(DType::f32), p64(DType::f64);
  Parameter& a = p32.add("w", Shape{1027});
  Parameter& b = p64.add("w", Shape{1027});
  for (int64_t i = 0; i < 1027; ++i) {
    const double w0 = std::sin(0.37 * double(i)), g0 = std::cos(0.11 * double(i)) * 0.3;
    a.value.set(i, w0);
    b.value.set(i, w0);
    a.grad.set(i, g0);
    b.grad.set(i, g0);
  }
  Adam adam32(p32, 0.01), adam64(p64, 0.01);
  for (int s = 0; s < 3; ++s) {
    adam32.step();
    adam64.step();
  }
  for (int64_t i = 0; i < 1027; ++i) {
    CAPTURE(i);
    CHECK(a.value.at(i) == doctest::Approx(b.value.at(i)).epsilon(1e-5));
  }
}

TEST_CASE("RMSProp") {
  ParameterSet ps(DType::f64);
  Parameter& w = setup(ps);
  RmsProp rms(ps, 0.01, 0.9, 1e-8);
  rms.step();  // s = 0.1 g^2; w -= lr g / sqrt(s)
  CHECK(w.value.at(0) == doctest::Approx(1.0 - 0.01 * 0.5 / std::sqrt(0.1 * 0.25)));
}

TEST_CASE("clipping by global norm and by value") {
  ParameterSet ps(DType::f64);
  Parameter& w = setup(ps);
  Parameter& u = ps.add("u", Shape{1});
  u.grad.fill(2.0);
  const double norm = std::sqrt(0.25 + 0.01 + 4.0);
  CHECK(grad_norm(ps) == doctest::Approx(norm));
  CHECK(clip_grad_norm(ps, 1.0) == doctest::Approx(norm));
  CHECK(grad_norm(ps) == doctest::Approx(1.0));
  CHECK(w.grad.at(0) == doctest::Approx(0.5 / norm));
  clip_grad_norm(ps, 10.0);  // already below: unchanged
  CHECK(grad_norm(ps) == doctest::Approx(1.0));
  u.grad.fill(5.0);
  clip_grad_value(ps, 0.3);
  CHECK(u.grad.at(0) == 0.3);
}
