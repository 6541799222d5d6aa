// `linear-svm`: the flat linear SVM per label (one binary L2-regularised SVM per code, no use of
// the code hierarchy: the "flat SVM" of Perotte et al. 2014, whose MIMIC-II numbers the GRNN
// paper compares with in section 4; Perotte's exact SVM settings are not in the GRNN paper) on the
// note's tf-idf row (tfidf_linear.hpp). Label l solves LIBLINEAR's problem (solver -s 1, squared
// hinge, default; -s 3, hinge, with loss "hinge"; bias as a regularised weight of a constant
// feature, -B 1), exactly (relative duality gap below `tolerance`) by dual coordinate descent
// (convex_solvers.hpp):
//     min_w 1/2 |w|^2 + C sum_d max(0, 1 - y_dl w.[x_d; 1])^(2 or 1),   y_dl in {-1, +1}.
// Its score for the ranking metrics is the decision value w.[x; 1] (the predictions as logits:
// the task's sigmoid keeps the order, and the threshold 0 becomes probability 0.5). The path:
// at epoch e (from 1) C = c_start * c_growth^(e - 1), each point solved from a = 0 (so a resumed
// run solves the same problems); the codiesp task's model selection keeps the C of best dev micro
// AUC-PR, one C for all labels. forward()'s loss is the data term's mean over (note, label).
#pragma once
#include <nlohmann/json.hpp>

#include "models/text/tfidf_linear.hpp"

namespace memgrad::text {

class LinearSvm : public TfIdfLinear {
 public:
  LinearSvm(const nlohmann::json& config, DType dtype, uint64_t seed);
  static nlohmann::json defaults();

 protected:
  std::string describe_point(int64_t epoch) const override;
  SolverReport solve_label(int64_t epoch, int64_t label, std::vector<double>& w,
                           double& b) const override;
  Var data_loss(Var logits, Var labels) const override;
  double label_loss(std::span<const double> margins, std::span<const double> y) const override;

 private:
  double c_at(int64_t epoch) const;
  double start_ = 0, growth_ = 0;
  SvmLoss loss_ = SvmLoss::squared_hinge;
  uint64_t seed_ = 0;
};

}  // namespace memgrad::text
