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
