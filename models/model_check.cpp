#include "models/model_check.hpp"

#include <cmath>
#include <vector>

#include "models/unroll.hpp"

namespace memgrad {

Var CheckVariant::loss(Tape& tape) {
  model->reset_state();
  const std::vector<const Batch*> batches(size_t(admissions), &batch);
  return unrolled_loss(*model, tape, batches);
}

std::vector<CheckVariant> check_variants(const ModelInfo& m) {
  std::vector<CheckVariant> variants;
  for (const nlohmann::json& cfg : m.check_configs) {
    CheckVariant v;
    v.label = m.name + "/" + cfg.value("variant", "default");
    nlohmann::json config = cfg;
    config.erase("variant");
    v.admissions = config.value("admissions", int64_t(1));
    MG_CHECK(v.admissions >= 1, v.label, ": check config 'admissions' must be >= 1");
    config.erase("admissions");
    v.model = m.create(config, DType::f64, 7);
    Rng rng(11);
    m.check_batch(rng, DType::f64, v.batch);
    variants.push_back(std::move(v));
  }
  return variants;
}

namespace {

double norm_of_difference(const Tensor& a, const Tensor& b) {
  double s = 0;
  for (int64_t i = 0; i < a.numel(); ++i) s += (a.at(i) - b.at(i)) * (a.at(i) - b.at(i));
  return std::sqrt(s);
}

// One forward and backward; the parameters' gradients are left in Parameter::grad.
double loss_and_gradients(CheckVariant& v) {
  v.model->params().zero_grad();
  Tape tape;
  const Var loss = v.loss(tape);
  tape.backward(loss);
  return loss.value().at(0);
}

}  // namespace

// The bounds. float32's unit roundoff is u = 6e-8. The loss is one pass of a few hundred rounded
// operations whose errors mostly average out: it differed by 1.4u at most (8.5e-8, wlas's authors
// variant); kFloat32LossRtol = 1e-6 is 12 times that, and far below what an approximate exp or
// tanh kernel wrong in the fourth digit would show. A gradient is a longer chain (the backward of
// every step of up to 12 steps): 73u (4.4e-6) relative to its norm at most in every tensor whose
// gradient is not a small difference of large terms. Where it is (wlas's attention queries, whose
// gradients are 1e-6 while the terms they are summed from are 100 times larger), float32 errs in
// proportion to the terms: up to 4.6e-5 of the norm. kFloat32GradRtol = 1e-3 is 20 times that
// worst case; a wrong SIMD lane or kernel errs by far more.
Float32Comparison compare_float32(const ModelInfo& m, CheckVariant& v,
                                  const std::function<void(ParameterSet&)>& tamper) {
  ParameterSet& p64 = v.model->params();
  std::unique_ptr<Model> model32 = m.create(v.model->config(), DType::f32, 7);
  ParameterSet& p32 = model32->params();
  MG_CHECK(p32.size() == p64.size(), v.label, ": float32 model has ", p32.size(),
           " parameters, float64 ", p64.size());
  for (size_t i = 0; i < p64.size(); ++i) {
    p32[i].value.copy_from(p64[i].value);  // rounded to float32 ...
    p64[i].value.copy_from(p32[i].value);  // ... and float64 takes the same values
  }
  CheckVariant v32{v.label, std::move(model32), Batch{}, v.admissions};
  for (const auto& [name, t] : v.batch.fields())
    v32.batch.field(name, t.shape(), DType::f32).copy_from(t);
  v32.batch.size = v.batch.size;

  Float32Comparison c;
  const double l64 = loss_and_gradients(v);
  const double l32 = loss_and_gradients(v32);
  if (tamper) tamper(p32);
  c.loss_rel_err = std::fabs(l32 - l64) / std::fabs(l64);
  c.passed = c.loss_rel_err <= kFloat32LossRtol;
  for (size_t i = 0; i < p64.size(); ++i) {
    c.params.push_back(p64[i].name);
    const Tensor zero = Tensor::zeros(p64[i].grad.shape(), DType::f64);
    c.grad_rel_err.push_back(norm_of_difference(p32[i].grad, p64[i].grad) /
                             norm_of_difference(p64[i].grad, zero));
    c.passed = c.passed && c.grad_rel_err.back() <= kFloat32GradRtol;
  }
  return c;
}

GradCheckOptions model_check_options() {
  GradCheckOptions opts;
  // eps: the numeric derivative (f(x + eps) - f(x - eps)) / 2eps errs by about d / eps from the
  // loss's rounding (d ~ 1e-15 for these losses near 2, a few ulps) plus eps^2 |f'''| / 6 from
  // truncation. Some whole parameter tensors have gradients near 5e-7 here (wlas's attention
  // queries: the scores are nearly uniform at init), where the op checks' eps = 1e-6 gives
  // rounding errors of 3e-10, 2.4e-4 of the tensor's scale. At 1e-5 they are 5e-11 at most, and
  // truncation stays below them (at 3e-5 it shows, 7e-6 of dmnc-early's write bias). Larger steps
  // also risk flipping a greedy decoder's argmax in the free-running variants (lstm's flipped at
  // +-6e-5).
  opts.eps = 1e-5;
  // Per tensor, max |analytic - numeric| <= 1e-4 * max(scale, 5e-6), scale = its largest
  // gradient. Above 5e-6 that is a relative bound of 1e-4, where the finite differences err by
  // 6.5e-6 of the scale at most (rounding, near 5e-6; truncation on large gradients stays below
  // 1.2e-6). Below, an absolute 5e-10, between the rounding errors there (up to 5.1e-11) and a 1%
  // error of the smallest gradients (5.2e-9 on wlas's attention queries, scale 5.2e-7): 10 times
  // the first and a tenth of the second. A test asserts that 1% of every tensor's scale exceeds
  // twice its allowance, and one plants a 1% error in every variant and sees it fail.
  opts.tensor_rtol = 1e-4;
  opts.tensor_floor = 5e-6;
  return opts;
}

std::vector<GradCheckResult> check_model_gradients(const ModelInfo& m, bool keep_values) {
  std::vector<GradCheckResult> results;
  for (CheckVariant& v : check_variants(m)) {
    GradCheckOptions opts = model_check_options();
    opts.keep_values = keep_values;
    results.push_back(check_parameter_gradients(
        v.label, v.model->params(), [&](Tape& tape) { return v.loss(tape); }, opts));
  }
  return results;
}

}  // namespace memgrad
