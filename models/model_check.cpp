#include "models/model_check.hpp"

namespace memgrad {

std::vector<GradCheckResult> check_model_gradients(const ModelInfo& m, bool keep_values) {
  std::vector<GradCheckResult> results;
  for (const nlohmann::json& cfg : m.check_configs) {
    const std::string label = m.name + "/" + cfg.value("variant", "default");
    nlohmann::json config = cfg;
    config.erase("variant");
    auto model = m.create(config, DType::f64, 7);
    Rng rng(11);
    Batch batch;
    m.check_batch(rng, DType::f64, batch);
    GradCheckOptions opts;
    opts.keep_values = keep_values;
    results.push_back(check_parameter_gradients(
        label, model->params(),
        [&](Tape& tape) { return model->forward(tape, batch, ForwardOptions{}).loss; }, opts));
  }
  return results;
}

}  // namespace memgrad
