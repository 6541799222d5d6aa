// Model selection over epochs for tasks that define a validation score (Task::selection_score,
// e.g. physionet2012's validation AUC-ROC): at each epoch end the score is computed and, when it
// beats every earlier epoch's, the parameters are saved to the run directory's best.safetensors
// with best.json {"epoch", "step", "metric", "value"}. The final evaluation (metrics.json), `eval`
// and `inspect` then use those parameters; checkpoint.safetensors stays the last step's, so a
// resumed run continues from where it stopped and still knows the best epoch (best.json).
// Ties keep the earlier epoch. With train setting select_by "valid_loss" the epoch of least
// validation loss is kept instead (metric "valid_loss"; DMN+'s rule), for any task with validation
// batches. With --patience P, training stops at the end of the epoch that is P epochs past the
// best one (early stopping, as DMN+ trains: P = 20).
#pragma once
#include <nlohmann/json.hpp>
#include <optional>

#include "tools/run_dir.hpp"
#include "tools/trainer.hpp"

namespace memgrad::cli {

class BestEpoch {
 public:
  // Reads the run's best.json when there is one (a resumed run).
  BestEpoch(const RunDir& dir, Trainer& trainer);
  // True when the run selects by a validation score or loss.
  bool active() const { return !metric_.empty(); }
  // What it selects by (Trainer::selection_metric).
  const std::string& metric() const { return metric_; }
  // At the end of `epoch` (the next step being next_step): scores the model and keeps its
  // parameters if best. Returns the fields for the epoch's log line ({metric: value, "best":
  // true|false} and the task's other epoch numbers, Task::epoch_scores), empty when the task
  // does not select.
  nlohmann::json end_epoch(int64_t epoch, int64_t next_step);
  // Early stopping: true when `patience` (> 0) epochs have ended since the best one, as of the
  // end of `epoch`. Never true before an epoch was scored, nor with patience 0 (off).
  bool out_of_patience(int64_t epoch, int64_t patience) const;
  // Loads the best epoch's parameters into the trainer's model; returns {"epoch", "step",
  // "metric", "value"} for metrics.json, or null when no epoch was scored.
  nlohmann::json restore();
  // Removes a run's best.* files (a run started again with --overwrite).
  static void remove(const RunDir& dir);
  // The best epoch's record so far (null: none), saved in each checkpoint; a resumed run takes
  // its checkpoint's back, since best.json may be newer than the checkpoint (written at an epoch
  // after it, before a kill) and would then judge the epochs the resume redoes.
  nlohmann::json record() const { return best_ ? *best_ : nlohmann::json(nullptr); }
  void resume(const nlohmann::json& record);

 private:
  const RunDir& dir_;
  Trainer& trainer_;
  std::string metric_;
  std::optional<nlohmann::json> best_;  // best.json's content
};

}  // namespace memgrad::cli
