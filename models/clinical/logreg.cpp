// Logistic regression (see logreg.hpp).
#include "models/clinical/logreg.hpp"

#include "models/clinical/mortality.hpp"
#include "models/layers/config.hpp"
#include "ops/ops.hpp"

namespace memgrad {
namespace {

nlohmann::json defaults() {
  nlohmann::json d = mortality::task_dims();
  d["l2"] = 0.03;
  d["init_range"] = 0.0;
  return d;
}

}  // namespace

LogReg::LogReg(const nlohmann::json& config, DType dtype, uint64_t seed) : Model(dtype) {
  config_ = layers::merge_config("logreg", defaults(), config);
  features_ = layers::config_int(config_, "logreg", "feature_size");
  MG_CHECK(layers::config_int(config_, "logreg", "output_size") == 1,
           "logreg: output_size must be 1 (one logit per stay)");
  l2_ = config_.at("l2").get<double>();
  MG_CHECK(l2_ >= 0, "logreg: l2 must be >= 0, got ", l2_);
  const double r = config_.at("init_range").get<double>();
  MG_CHECK(r >= 0, "logreg: init_range must be >= 0, got ", r);
  Rng rng(seed);
  w_ = &params_.add_uniform("w", Shape{features_, 1}, -r, r, rng);
  b_ = &params_.add("b", Shape{1});
}

ForwardResult LogReg::forward(Tape& tape, const Batch& batch, const ForwardOptions&) {
  Var f = mortality::input(tape, batch, name(), "features", Shape{features_});
  Var w = tape.param(*w_);
  Var logits = addmm(tape.param(*b_), f, w);  // [B, 1]
  Var penalty;
  if (l2_ > 0) penalty = scale(sum(mul(w, w)), 0.5 * l2_);
  return mortality::result(tape, batch, name(), logits, penalty);
}

namespace {

const bool kRegistered = [] {
  nlohmann::json tiny = {
      {"feature_size", 6}, {"init_range", 0.3}, {"l2", 0.1}, {"input_size", 5}, {"steps", 4}};
  nlohmann::json plain = tiny;
  plain["variant"] = "no-penalty";
  plain["l2"] = 0.0;
  tiny["variant"] = "l2";
  mortality::register_model(
      "logreg",
      "logistic regression on the stay's summary features, L2 penalty (EBmRNN paper, Table 1 LR "
      "baseline; task physionet2012)",
      [](const nlohmann::json& c, DType d, uint64_t s) {
        return std::make_unique<LogReg>(c, d, s);
      },
      defaults(),
      // Chosen on set-a's validation stays with l2 (docs/physionet2012.md, "Tuning").
      {{"optimizer", "adam"}, {"lr", 3e-3}, {"batch", 64}, {"epochs", 60}, {"iterations", 0}},
      {tiny, plain});
  return true;
}();

}  // namespace
}  // namespace memgrad
