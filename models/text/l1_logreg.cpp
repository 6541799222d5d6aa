// L1-regularised logistic regression per label on tf-idf (see l1_logreg.hpp).
#include "models/text/l1_logreg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "models/text/text_inputs.hpp"
#include "ops/ops.hpp"

namespace memgrad::text {

nlohmann::json L1LogReg::defaults() {
  // The paper tunes the strength "independently for each label using the validation sets".
  return base_defaults({{"path_start", 0.7}, {"path_ratio", 0.7}, {"select", "per_label"}});
}

L1LogReg::L1LogReg(const nlohmann::json& config, DType dtype, uint64_t seed)
    : TfIdfLinear("l1-logreg", defaults(), config, dtype, seed) {
  start_ = this->config().at("path_start").get<double>();
  ratio_ = this->config().at("path_ratio").get<double>();
  MG_CHECK(start_ > 0 && start_ <= 1 && ratio_ > 0 && ratio_ < 1,
           "l1-logreg: path_start must be in (0, 1] and path_ratio in (0, 1), got ", start_,
           " and ", ratio_);
}

double L1LogReg::fraction(int64_t epoch) const {
  return start_ * std::pow(ratio_, double(epoch - 1));
}

std::string L1LogReg::describe_point(int64_t epoch) const {
  char text[64];
  std::snprintf(text, sizeof text, "lambda %.4g x lambda_max", fraction(epoch));
  return text;
}

SolverReport L1LogReg::solve_label(int64_t epoch, int64_t label, std::vector<double>& w,
                                   double& b) const {
  const TfIdfData& d = data();
  const std::vector<double> y = d.label_column(label);
  const double lambda_max = l1_logreg_lambda_max(d.columns, y);
  // (a label whose lambda_max is 0 has one class only: the solver's special case)
  const double lambda = std::max(lambda_max * fraction(epoch), 1e-300);
  return solve_l1_logreg(d.columns, y, lambda, w, b, solver_options());
}

Var L1LogReg::data_loss(Var logits, Var labels) const { return bce_with_logits(logits, labels); }

double L1LogReg::label_loss(std::span<const double> margins, std::span<const double> y) const {
  double s = 0;  // mean of log(1 + e^z) - y z
  for (size_t i = 0; i < margins.size(); ++i)
    s +=
        std::max(margins[i], 0.0) + std::log1p(std::exp(-std::abs(margins[i]))) - y[i] * margins[i];
  return s / double(margins.size());
}

namespace {

const bool kRegistered = [] {
  nlohmann::json tiny = {
      {"variant", "logistic"}, {"input_vocab", 7}, {"labels", 3}, {"init_range", 0.5}};
  register_model(
      {.name = "l1-logreg",
       .summary = "L1-regularised logistic regression per label on tf-idf, solved exactly "
                  "(coordinate descent to a duality gap) along a regularisation path chosen on "
                  "dev (GRNN paper, section 4 baseline; task codiesp)",
       .create = [](const nlohmann::json& c, DType d,
                    uint64_t s) { return std::make_unique<L1LogReg>(c, d, s); },
       .default_config = L1LogReg::defaults(),
       .train_defaults = {{"optimizer", "sgd"}, {"batch", 32}, {"epochs", 15}, {"iterations", 0}},
       .check_configs = {tiny},
       .check_batch = [](Rng& rng, DType dtype,
                         Batch& batch) { make_check_batch(rng, dtype, batch, 3, 4, 7, 3); }});
  return true;
}();

}  // namespace
}  // namespace memgrad::text
