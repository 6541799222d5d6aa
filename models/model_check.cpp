#include "models/model_check.hpp"

namespace memgrad {

std::vector<CheckVariant> check_variants(const ModelInfo& m) {
  std::vector<CheckVariant> variants;
  for (const nlohmann::json& cfg : m.check_configs) {
    CheckVariant v;
    v.label = m.name + "/" + cfg.value("variant", "default");
    nlohmann::json config = cfg;
    config.erase("variant");
    v.model = m.create(config, DType::f64, 7);
    Rng rng(11);
    m.check_batch(rng, DType::f64, v.batch);
    variants.push_back(std::move(v));
  }
  return variants;
}

GradCheckOptions model_check_options() {
  GradCheckOptions opts;
  // eps: the numeric derivative (f(x + eps) - f(x - eps)) / 2eps errs by about d / eps from the
  // loss's rounding (d ~ 1e-15 for these losses near 2, a few ulps) plus eps^2 |f'''| / 6 from
  // truncation. Some whole parameter tensors have gradients near 5e-7 here (wlas's attention
  // queries: the scores are nearly uniform at init), where the op checks' eps = 1e-6 gives
  // rounding errors of 3e-10, 2.4e-4 of the tensor's scale. At 1e-5 they are 3.5e-11, and the
  // worst tensor is at 2.2e-5 of its scale, truncation included (at 3e-5 truncation shows, 7e-6 of
  // dmnc-early's write bias). Larger steps also risk flipping a greedy decoder's argmax in the
  // free-running variants (lstm's flipped at +-6e-5).
  opts.eps = 1e-5;
  // Per tensor, max |analytic - numeric| <= 1e-4 of its largest gradient: 4.5 times the worst
  // tensor today, and a hundredth of what a 1% error in one tensor's gradient shows (a test plants
  // one in every variant). The floor 1e-8 only keeps an all-zero gradient from dividing by zero:
  // every checked tensor's gradient reaches 5e-7 or more (a test asserts each is above it), and
  // below 1e-10 no finite difference could tell 1% anyway.
  opts.tensor_rtol = 1e-4;
  opts.tensor_floor = 1e-8;
  return opts;
}

std::vector<GradCheckResult> check_model_gradients(const ModelInfo& m, bool keep_values) {
  std::vector<GradCheckResult> results;
  for (CheckVariant& v : check_variants(m)) {
    GradCheckOptions opts = model_check_options();
    opts.keep_values = keep_values;
    results.push_back(check_parameter_gradients(
        v.label, v.model->params(),
        [&](Tape& tape) { return v.model->forward(tape, v.batch, ForwardOptions{}).loss; }, opts));
  }
  return results;
}

}  // namespace memgrad
