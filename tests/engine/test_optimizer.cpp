#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

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

// Gradient clipping folded into the step (plan_grad_clip + Optimizer::step(clip, zero_grads)).
namespace {

// Two parameters, 1027 and 21 elements (SIMD groups and scalar tails), and their gradients for
// step s: both signs, no zeros, largest elements about `gscale`.
struct Model {
  ParameterSet ps;
  explicit Model(DType dtype = DType::f32) : ps(dtype) {
    for (auto [name, n] : {std::pair{"a", 1027}, std::pair{"b", 21}}) {
      Parameter& p = ps.add(name, Shape{n});
      for (int64_t i = 0; i < n; ++i) p.value.set(i, std::sin(0.37 * double(i + n)));
    }
  }
  void set_grads(int s, double gscale) {
    for (size_t k = 0; k < ps.size(); ++k) {
      Tensor& g = ps[k].grad;
      for (int64_t i = 0; i < g.numel(); ++i) {
        const double x = std::cos(0.11 * double(i) + 0.7 * double(s) + double(k));
        g.set(i, gscale * (x >= 0 ? x + 0.01 : x - 0.01) * (i % 7 == 0 ? 1.0 : 0.2));
      }
    }
  }
};

// The recipe as separate passes: the two clip_grad_ calls, in `order`, then a plain step.
void clip_then_step(ParameterSet& ps, Optimizer& opt, double clip_norm, double clip_value,
                    ClipOrder order) {
  if (order == ClipOrder::kValueThenNorm && clip_value > 0) clip_grad_value(ps, clip_value);
  if (clip_norm > 0) clip_grad_norm(ps, clip_norm);
  if (order == ClipOrder::kNormThenValue && clip_value > 0) clip_grad_value(ps, clip_value);
  opt.step();
}

// Every tensor of a's parameters and state equals b's, bit for bit.
void check_same(ParameterSet& pa, Optimizer& a, ParameterSet& pb, Optimizer& b) {
  for (size_t k = 0; k < pa.size(); ++k) CHECK(pa[k].value.to_vector() == pb[k].value.to_vector());
  auto sa = a.state(), sb = b.state();
  REQUIRE(sa.size() == sb.size());
  for (size_t k = 0; k < sa.size(); ++k) {
    CAPTURE(sa[k].first);
    CHECK(sa[k].second->to_vector() == sb[k].second->to_vector());
  }
}

// Float64 reference of one Adam step of a recipe, in plain loops over all elements of all
// parameters in order (w, m, v, g: the parameters' elements one after the other): value clip ->
// global-norm clip on the value-clipped gradients -> Adam (lr, default betas and eps), or the
// two clips the other way round. Returns whether each clip changed something.
std::pair<bool, bool> reference_adam(std::vector<double>& w, std::vector<double>& m,
                                     std::vector<double>& v, std::vector<double> g, int step,
                                     double lr, double clip_norm, double clip_value,
                                     ClipOrder order) {
  bool norm_clipped = false, value_clipped = false;
  auto clip_value_pass = [&] {
    if (clip_value <= 0) return;
    for (double& x : g) {
      value_clipped |= std::abs(x) > clip_value;
      x = std::min(std::max(x, -clip_value), clip_value);
    }
  };
  auto clip_norm_pass = [&] {
    double norm = 0;
    for (double x : g) norm += x * x;
    norm = std::sqrt(norm);
    if (clip_norm <= 0 || norm <= clip_norm) return;
    norm_clipped = true;
    for (double& x : g) x *= clip_norm / norm;
  };
  if (order == ClipOrder::kValueThenNorm) {
    clip_value_pass();
    clip_norm_pass();
  } else {
    clip_norm_pass();
    clip_value_pass();
  }
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  for (size_t j = 0; j < w.size(); ++j) {
    m[j] = b1 * m[j] + (1 - b1) * g[j];
    v[j] = b2 * v[j] + (1 - b2) * g[j] * g[j];
    const double mhat = m[j] / (1 - std::pow(b1, step)), vhat = v[j] / (1 - std::pow(b2, step));
    w[j] -= lr * mhat / (std::sqrt(vhat) + eps);
  }
  return {norm_clipped, value_clipped};
}

std::vector<double> all_values(ParameterSet& ps, bool grads) {
  std::vector<double> out;
  for (size_t k = 0; k < ps.size(); ++k) {
    const auto t = (grads ? ps[k].grad : ps[k].value).to_vector();
    out.insert(out.end(), t.begin(), t.end());
  }
  return out;
}

}  // namespace

TEST_CASE("plan_grad_clip's norm is grad_norm's; all-zero settings clip nothing") {
  for (DType dtype : {DType::f32, DType::f64}) {
    CAPTURE(int(dtype));
    Model mod(dtype);
    mod.set_grads(0, 30.0);
    const double norm = grad_norm(mod.ps);
    for (ClipOrder order : {ClipOrder::kNormThenValue, ClipOrder::kValueThenNorm}) {
      const GradClip off = plan_grad_clip(mod.ps, 0, 0, order);
      CHECK(off.norm == norm);  // bit for bit: the same sums in the same order
      CHECK(off.pre == 1);
      CHECK(off.post == 1);
      CHECK(std::isinf(off.limit));
      const GradClip both = plan_grad_clip(mod.ps, 1.0, 2.0, order);
      CHECK(both.norm == norm);
      CHECK(both.limit == 2.0);
      CHECK(both.pre * both.post < 1);
      CHECK((both.pre == 1 || both.post == 1));
    }
    const GradClip loose = plan_grad_clip(mod.ps, 2 * norm, 0, ClipOrder::kNormThenValue);
    CHECK(loose.pre == 1);  // the norm is below the clip: no scale
  }
}

TEST_CASE("a clipped step is the separate clip passes and step, bit for bit") {
  // clip_norm, clip_value: both active, each alone, inactive, both off (0).
  const double settings[][2] = {{1.0, 0.5}, {1.0, 0.0}, {0.0, 0.5}, {1e6, 1e6}, {0.0, 0.0}};
  for (DType dtype : {DType::f32, DType::f64})
    for (ClipOrder order : {ClipOrder::kNormThenValue, ClipOrder::kValueThenNorm})
      for (const auto& [clip_norm, clip_value] : settings)
        for (const char* kind : {"adam", "sgd", "sgd-momentum", "rmsprop"}) {
          CAPTURE(int(dtype));
          CAPTURE(int(order));
          CAPTURE(clip_norm);
          CAPTURE(clip_value);
          CAPTURE(kind);
          Model fused(dtype), separate(dtype);
          auto make = [&](ParameterSet& ps) -> std::unique_ptr<Optimizer> {
            if (std::string(kind) == "adam") return std::make_unique<Adam>(ps, 0.01);
            if (std::string(kind) == "sgd") return std::make_unique<Sgd>(ps, 0.01);
            if (std::string(kind) == "sgd-momentum") return std::make_unique<Sgd>(ps, 0.01, 0.9);
            return std::make_unique<RmsProp>(ps, 0.01, 0.9, 1e-8, 0.5);
          };
          auto opt_f = make(fused.ps), opt_s = make(separate.ps);
          for (int s = 0; s < 3; ++s) {
            fused.set_grads(s, 3.0);
            separate.set_grads(s, 3.0);
            const GradClip clip = plan_grad_clip(fused.ps, clip_norm, clip_value, order);
            opt_f->step(clip, /*zero_grads=*/true);
            for (size_t k = 0; k < fused.ps.size(); ++k)
              CHECK(fused.ps[k].grad.to_vector() ==
                    std::vector<double>(size_t(fused.ps[k].grad.numel()), 0.0));
            clip_then_step(separate.ps, *opt_s, clip_norm, clip_value, order);
          }
          check_same(fused.ps, *opt_f, separate.ps, *opt_s);
        }
}

TEST_CASE("a clipped Adam step leaves the gradients as they were without zero_grads") {
  Model mod;
  mod.set_grads(0, 3.0);
  const std::vector<double> before = all_values(mod.ps, true);
  Adam adam(mod.ps, 0.01);
  adam.step(plan_grad_clip(mod.ps, 1.0, 0.5, ClipOrder::kValueThenNorm), false);
  CHECK(all_values(mod.ps, true) == before);
}

TEST_CASE("value clip -> global-norm clip -> Adam: float32 fused step vs a float64 reference") {
  struct Case {
    const char* what;
    double gscale, clip_norm, clip_value;
  };
  // Gradient scales differ between steps (below) so that the norm clip changes the update.
  const Case cases[] = {
      {"norm clip active, value clip active", 3.0, 1.0, 0.5},
      {"norm clip active, value clip off (0)", 3.0, 1.0, 0.0},
      {"norm clip inactive, value clip active", 0.05, 100.0, 0.02},
      {"norm clip off (0), value clip off (0)", 3.0, 0.0, 0.0},
  };
  // Also in the trainer's order (norm clip first), where a clip_value above clip_norm is idle.
  for (ClipOrder order : {ClipOrder::kValueThenNorm, ClipOrder::kNormThenValue})
    for (const Case& c : cases) {
      CAPTURE(int(order));
      const std::string what = c.what;
      CAPTURE(what);
      Model mod;
      Adam adam(mod.ps, 0.01);
      std::vector<double> w = all_values(mod.ps, false), m(w.size(), 0.0), v(w.size(), 0.0);
      bool norm_clipped = false, value_clipped = false;
      for (int s = 0; s < 4; ++s) {
        mod.set_grads(s, c.gscale * (1 + s));
        const auto [norm_hit, value_hit] = reference_adam(w, m, v, all_values(mod.ps, true), s + 1,
                                                          0.01, c.clip_norm, c.clip_value, order);
        norm_clipped |= norm_hit;
        value_clipped |= value_hit;
        adam.step(plan_grad_clip(mod.ps, c.clip_norm, c.clip_value, order), true);
      }
      if (order == ClipOrder::kValueThenNorm) {  // the case is what it says
        CHECK(norm_clipped == (what.find("norm clip active") == 0));
        CHECK(value_clipped == (what.find("value clip active") != std::string::npos));
      }
      // Adam's update barely depends on the gradient's scale, its moments do: check all three.
      const std::vector<double> got_w = all_values(mod.ps, false);
      std::vector<double> got_m, got_v;
      for (auto& [name, t] : adam.state()) {
        std::vector<double>& out = name.rfind("adam.m/", 0) == 0 ? got_m : got_v;
        const std::vector<double> x = t->to_vector();
        out.insert(out.end(), x.begin(), x.end());
      }
      REQUIRE(got_m.size() == w.size());
      REQUIRE(got_v.size() == w.size());
      // Tolerances of float32 Adam itself: m sums terms of both signs (so its error is relative
      // to the largest m), and 1 - beta2 in float32 is 1.3e-5 off 0.001. A clip applied wrongly
      // changes an element's m and v by far more (a clamped one, or all by the norm's scale).
      double m_scale = 0;
      for (double x : m) m_scale = std::max(m_scale, std::abs(x));
      for (size_t j = 0; j < w.size(); ++j) {
        CAPTURE(j);
        CHECK(got_w[j] == doctest::Approx(w[j]).epsilon(1e-6));
        CHECK(got_m[j] == doctest::Approx(m[j]).epsilon(1e-5).scale(m_scale));
        CHECK(got_v[j] == doctest::Approx(v[j]).epsilon(3e-5).scale(0));
      }
    }
}
