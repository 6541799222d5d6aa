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
        v.label, v.model->params(),
        [&](Tape& tape) { return v.model->forward(tape, v.batch, ForwardOptions{}).loss; }, opts));
  }
  return results;
}

}  // namespace memgrad
