// Logistic regression on a stay's summary features, the EBmRNN paper's LR baseline ("Logistic
// Regression using the features used in [6]", Harutyunyan et al. 2019; the features are built by
// the task: tasks/physionet2012.hpp):
//     logit = features . w + b,   loss = mean_b bce(logit_b, y_b) + (l2 / 2) |w|^2
// The L2 penalty (config "l2", the bias not penalised) is scikit-learn's 1 / C per training
// stay: C = 1 / (l2 * n_train). Weights start at zero (config "init_range" r > 0: uniform(-r, r),
// used by the gradient checks so that the penalty's gradient is not checked only at 0).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "models/model.hpp"

namespace memgrad {

class LogReg : public Model {
 public:
  LogReg(const nlohmann::json& config, DType dtype, uint64_t seed);
  std::string name() const override { return "logreg"; }
  nlohmann::json config() const override { return config_; }
  ForwardResult forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) override;
  bool supports_shards() const override { return true; }

 private:
  nlohmann::json config_;
  int64_t features_ = 0;
  double l2_ = 0;
  Parameter *w_ = nullptr, *b_ = nullptr;
};

}  // namespace memgrad
