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

std::vector<GradCheckResult> check_model_gradients(const ModelInfo& m, bool keep_values) {
  std::vector<GradCheckResult> results;
  for (CheckVariant& v : check_variants(m)) {
    GradCheckOptions opts;
    opts.keep_values = keep_values;
    results.push_back(check_parameter_gradients(
        v.label, v.model->params(),
        [&](Tape& tape) { return v.model->forward(tape, v.batch, ForwardOptions{}).loss; }, opts));
  }
  return results;
}

}  // namespace memgrad
