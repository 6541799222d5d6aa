// Flat linear SVM per label on tf-idf (see linear_svm.hpp).
#include "models/text/linear_svm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "models/text/text_inputs.hpp"
#include "ops/ops.hpp"

namespace memgrad::text {

nlohmann::json LinearSvm::defaults() {
  return base_defaults({{"loss", "squared_hinge"}, {"c_start", 0.0625}, {"c_growth", 2.0}});
}

LinearSvm::LinearSvm(const nlohmann::json& config, DType dtype, uint64_t seed)
    : TfIdfLinear("linear-svm", defaults(), config, dtype, seed), seed_(seed) {
  start_ = this->config().at("c_start").get<double>();
  growth_ = this->config().at("c_growth").get<double>();
  MG_CHECK(start_ > 0 && growth_ >= 1, "linear-svm: c_start must be > 0 and c_growth >= 1, got ",
           start_, " and ", growth_);
  const std::string loss = this->config().at("loss").get<std::string>();
  MG_CHECK(loss == "hinge" || loss == "squared_hinge",
           "linear-svm: loss must be \"hinge\" or \"squared_hinge\", got \"", loss, "\"");
  loss_ = loss == "hinge" ? SvmLoss::hinge : SvmLoss::squared_hinge;
}

double LinearSvm::c_at(int64_t epoch) const {
  return start_ * std::pow(growth_, double(epoch - 1));
}

std::string LinearSvm::describe_point(int64_t epoch) const {
  char text[32];
  std::snprintf(text, sizeof text, "C %.4g", c_at(epoch));
  return text;
}

SolverReport LinearSvm::solve_label(int64_t epoch, int64_t label, std::vector<double>& w,
                                    double& b) const {
  const TfIdfData& d = data();
  const std::vector<double> y = d.label_column(label);
  return solve_linear_svm(d.rows, y, c_at(epoch), loss_, w, b, seed_ + uint64_t(label),
                          solver_options());
}

// mean over (note, label) of max(0, 1 - y f)^(2 or 1), y = 2 t - 1.
Var LinearSvm::data_loss(Var logits, Var labels) const {
  const Var margin = relu(add_scalar(neg(mul(scale_shift(labels, 2.0, -1.0), logits)), 1.0));
  return mean(loss_ == SvmLoss::squared_hinge ? mul(margin, margin) : margin);
}

double LinearSvm::label_loss(std::span<const double> margins, std::span<const double> y) const {
  double s = 0;
  for (size_t i = 0; i < margins.size(); ++i) {
    const double e = std::max(0.0, 1 - (2 * y[i] - 1) * margins[i]);
    s += loss_ == SvmLoss::squared_hinge ? e * e : e;
  }
  return s / double(margins.size());
}

namespace {

const bool kRegistered = [] {
  const nlohmann::json tiny = {
      {"variant", "squared-hinge"}, {"input_vocab", 7}, {"labels", 3}, {"init_range", 0.5}};
  nlohmann::json hinge = tiny;
  hinge["variant"] = "hinge";
  hinge["loss"] = "hinge";
  register_model(
      {.name = "linear-svm",
       .summary = "flat linear SVM per label on tf-idf (L2, squared hinge; LIBLINEAR's dual "
                  "coordinate descent to a duality gap) along a path of C chosen on dev (task "
                  "codiesp)",
       .create = [](const nlohmann::json& c, DType d,
                    uint64_t s) { return std::make_unique<LinearSvm>(c, d, s); },
       .default_config = LinearSvm::defaults(),
       .train_defaults = {{"optimizer", "sgd"}, {"batch", 32}, {"epochs", 12}, {"iterations", 0}},
       .check_configs = {tiny, hinge},
       .check_batch = [](Rng& rng, DType dtype,
                         Batch& batch) { make_check_batch(rng, dtype, batch, 3, 4, 7, 3); }});
  return true;
}();

}  // namespace
}  // namespace memgrad::text
