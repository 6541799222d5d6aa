// The linear baselines of the GRNN paper (section 4) on task codiesp, fitted by exact solvers
// rather than gradient steps: one linear classifier per label on the note's tf-idf features
// (tfidf.hpp; vocabulary and idf from the training notes only),
//     logits = x W + b,   x = the note's unit tf-idf row,  W [V, L], b [L].
// `l1-logreg` (l1_logreg.cpp) and `linear-svm` (linear_svm.cpp) derive from it and say which
// problem they solve. Their run is a regularisation path: the trainer
// shows the model all training notes once, and at the end of epoch e the model solves every
// label's problem at the path's e-th strength (convex_solvers.hpp) and sets W, b (and the idf
// weights) to the solution; the codiesp task's model selection then keeps the epoch (path point)
// of best dev micro AUC-PR, so the strength is chosen once for all labels on the dev split. With
// `--select per_label` each label instead keeps, from the path points solved so far, the solution
// of least dev loss (its own data term on the dev notes, with the training notes' idf): the
// parameters after epoch e hold every label's best of points 1..e, and each point is solved from
// them (any start reaches the optimum). The
// note of each epoch's log line gives the strength, the weights left non-zero, the sweeps, the
// largest relative duality gap and the solver's CPU seconds.
//
// forward() computes the same features on the tape from the batch's word ids, in the run's float
// type; its loss is the smooth data term of the solved objective (mean over (note, label)), which
// the float64 gradient checks cover (with respect to W, b and the idf weights): the regulariser is
// the solvers', tested on its own (tests/models/test_convex_solvers.cpp).
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "models/model.hpp"
#include "models/solved_model.hpp"
#include "models/text/convex_solvers.hpp"
#include "models/text/tfidf.hpp"

namespace memgrad::text {

class TfIdfLinear : public Model, public SolvedModel {
 public:
  std::string name() const override { return name_; }
  nlohmann::json config() const override { return config_; }
  ForwardResult forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) override;
  bool supports_shards() const override { return true; }
  bool needs_data() const override { return !data_; }
  void observe(const Batch& batch, bool last) override;
  void observe_validation(const Batch& batch, bool last) override;
  std::string on_epoch_end(int64_t epoch, double validation_loss) override;
  nlohmann::json training_state() const override;
  void set_training_state(const nlohmann::json& state) override;

 protected:
  // `defaults` holds the model's own keys; the task's sizes, the solver's tolerance and sweep
  // limit, and init_range (the weights' uniform range at the start: gradient checks) are added.
  TfIdfLinear(std::string name, nlohmann::json defaults, const nlohmann::json& config, DType dtype,
              uint64_t seed);
  // Every key of the base's config beside a model's own defaults.
  static nlohmann::json base_defaults(nlohmann::json own);
  const TfIdfData& data() const { return *data_; }
  SolverOptions solver_options() const { return solver_; }
  // The strength of path point `epoch` (from 1) as text for the log ("lambda 0.35 x lambda_max").
  virtual std::string describe_point(int64_t epoch) const = 0;
  // Solves label l's problem at path point `epoch` into w [V] and b, which hold the current
  // solution (a warm start) on entry.
  virtual SolverReport solve_label(int64_t epoch, int64_t label, std::vector<double>& w,
                                   double& b) const = 0;
  // The smooth data term of the objective from logits [B, L] and 0/1 labels [B, L].
  virtual Var data_loss(Var logits, Var labels) const = 0;
  // The same term for one label's margins and 0/1 labels (per-label choice on dev).
  virtual double label_loss(std::span<const double> margins, std::span<const double> y) const = 0;

 private:
  std::string name_;
  nlohmann::json config_;
  int64_t vocab_ = 0, labels_ = 0;
  SolverOptions solver_;
  NoteCollector notes_, dev_notes_;
  std::unique_ptr<TfIdfData> data_, dev_;
  bool per_label_ = false;  // select "per_label": each label keeps its point of least dev loss
  std::vector<double> best_dev_loss_;  // per label, of the solution it keeps (per_label)
  std::vector<int64_t> kept_point_;    // per label, the path point it keeps (per_label)
  double dev_loss_of(int64_t label, std::span<const double> w, double b) const;
  Parameter *w_ = nullptr, *b_ = nullptr, *idf_ = nullptr;
};

}  // namespace memgrad::text
