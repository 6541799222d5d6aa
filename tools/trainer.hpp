// Training of any registered model on any registered task: the step (forward, backward,
// clipping, update), evaluation, checkpoints and exact resume. `memgrad train`, `eval` and `bench`
// share it.
#pragma once
#include <chrono>
#include <deque>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/batch.hpp"
#include "engine/lr_schedule.hpp"
#include "engine/optimizer.hpp"
#include "engine/tape.hpp"
#include "models/model.hpp"
#include "tasks/task.hpp"
#include "tools/ranks.hpp"

namespace memgrad {
class SolvedModel;
}

namespace memgrad::cli {

// Everything that defines a run; written to config.json and read back by eval and resume.
struct RunConfig {
  std::string task, model;
  nlohmann::json task_settings, model_config, train;  // merged over the defaults
  uint64_t seed = 1;
  DType dtype = DType::f32;

  nlohmann::json to_json() const;
  static RunConfig from_json(const nlohmann::json& j, const std::string& source);
  // Points a data task at another data folder (--data for a saved run); an Error if the task
  // reads none.
  void set_data_dir(const std::string& dir);
  // `--set KEY=VALUE` items of eval, inspect and figure on a saved run: each changes a model
  // setting (KEY one of the model's config keys; VALUE JSON of the same type, a bare word a
  // string). Returns the settings changed as {KEY: VALUE}. UsageError naming the item otherwise.
  nlohmann::json override_model_settings(const std::vector<std::string>& items);
};

// Where the run's log.jsonl stood when a checkpoint was written, so that a resumed run writes
// the log an uninterrupted run writes, line for line (the loss_mean of a line spans steps on both
// sides of a checkpoint whenever the intervals do not divide each other).
struct LogState {
  int64_t lines = -1;      // lines the run had written (-1: unknown, a memgrad-checkpoint-1)
  double loss_sum = 0;     // losses of the steps since the last loss line, summed in step order
  int64_t loss_count = 0;  // and how many
  // Model selection (tools/model_selection.hpp): the best epoch's record so far, which decides
  // the "best" field of the next epoch lines (null: none yet, or the task does not select;
  // nullopt: not recorded, a memgrad-checkpoint-1 or an early -2).
  std::optional<nlohmann::json> best_epoch;
};

struct StepTiming {
  double forward_ms = 0, backward_ms = 0, optimizer_ms = 0;
  double loss = 0, grad_norm = 0;
};

class Trainer {
 public:
  // With `ranks` (an MPI run of R processes), this process trains its share of every batch:
  // train setting "shards" S is per rank, and the batch is split into R x S shards, rank r taking
  // shards r S ... r S + S - 1, whose gradients the ranks sum in rank order (Ranks). Every rank
  // then makes the same update. With one shard per rank, the losses and parameters are those of
  // one process with --shards R, bit for bit.
  explicit Trainer(const RunConfig& config, Ranks* ranks = nullptr);

  // One training step on the batch of `step` (data and noise are pure functions of the step).
  // With train setting "shards" S > 1 the batch is split into S contiguous row blocks, each run
  // forward and backward on its own tape, concurrently when threads allow; the shards' losses are
  // weighted by their share of the loss's terms (ForwardResult::loss_terms), so the loss and the
  // gradient are the full batch's up to rounding. Results depend on S, never on the thread count.
  // The first call also runs reserve_memory() (no update: results are the same without it).
  StepTiming train_step(int64_t step);
  // Mean model loss over the task's validation batches (NaN when the task has none).
  double validation_loss();
  // Test metrics. Sequence decoders decode greedily (fed their own predictions) unless
  // teacher_forcing, which feeds them the targets as in training: the gap between the two is the
  // cost of exposure to the model's own errors.
  nlohmann::json evaluate(bool teacher_forcing = false);
  // The per-example (or per-label) scores file of `memgrad eval --scores` (Task::scores_csv).
  std::string scores_csv();
  // The task's validation score for model selection (Task::selection_score); nullopt when the
  // task selects nothing.
  std::optional<double> selection_score();
  // The numbers of an epoch's log line, the selection score among them (Task::epoch_scores).
  nlohmann::json epoch_scores();
  // Called at each epoch boundary: validation, the model's schedule hook. Returns a log note.
  std::string end_epoch(int64_t epoch);
  // The validation loss the last end_epoch computed (NaN before one, or without validation).
  double last_validation_loss() const { return last_validation_loss_; }
  // True when train setting select_by is "valid_loss": epochs are kept by least validation loss
  // (DMN+'s rule) rather than by the task's validation score.
  bool selects_by_loss() const;
  // What the run keeps its best epoch by: "valid_loss", or the task's selection_metric() ("" when
  // it selects nothing).
  std::string selection_metric() const;
  double current_lr(int64_t step) const;

  // `log`: where the run's log stood, for a checkpoint to resume from; null for a file of
  // parameters that is never resumed from (best.safetensors).
  void save_checkpoint(const std::string& path, int64_t next_step,
                       const LogState* log = nullptr) const;
  // Restores parameters, optimizer state and the model's schedule; returns the next step and
  // fills `log`. The checkpoint's run settings must be this run's (but for its length and data
  // folder): an Error names the first that differs.
  int64_t load_checkpoint(const std::string& path, LogState* log = nullptr);
  // Parameters only (for eval).
  void load_parameters_from(const std::string& path);

  int64_t total_steps() const { return total_steps_; }
  int64_t steps_per_epoch() const { return steps_per_epoch_; }
  // False for a generator task (sum2seq): its steps never end an epoch.
  bool has_epochs() const { return has_epochs_; }
  int64_t batch_size() const { return batch_; }
  const RunConfig& config() const { return config_; }
  Model& model() { return *model_; }
  Task& task() { return *task_; }
  Tape& tape() { return tape_; }  // the training tape (shard 0's with shards)
  int64_t shards() const { return shards_; }
  int64_t ranks() const { return ranks_ ? ranks_->size() : 1; }
  size_t tape_nodes() const;  // nodes recorded by the last step, over all shards
  // Over all shard tapes: the most arena bytes one step wrote (what stays resident).
  size_t arena_high_water() const;
  // Over all shard tapes: the bytes of values the last step gave back as temporaries.
  size_t released_bytes() const;
  void set_detect_anomaly(bool on);

 private:
  // Calls `use` with a Predictor that runs the model in evaluation mode (no gradient, no noise
  // from training) on its own tape.
  template <class Use>
  auto with_predictor(bool teacher_forcing, Use&& use);

  RunConfig config_;
  std::unique_ptr<Task> task_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Optimizer> optimizer_;
  Tape tape_;
  Batch batch_data_;
  // shards_ > 1: the shards' sub-batches, and tapes of shards 1.. (shard 0 uses tape_), reused
  // every step.
  int64_t shards_ = 1;
  Ranks* ranks_ = nullptr;
  int64_t global_shards_ = 1;                          // shards_ on every rank
  int64_t first_shard_ = 0;                            // the global index of this rank's shard 0
  std::vector<double> shard_stats_, all_shard_stats_;  // (loss terms, loss) per shard
  std::vector<char> flat_grads_;  // every parameter's gradient, for the sum over ranks
  void sum_grads_over_ranks();
  std::deque<Tape> shard_tapes_;
  std::deque<Batch> shard_batches_;
  std::vector<ForwardResult> shard_out_;
  std::vector<Tensor> shard_upstream_;
  Tape& shard_tape(int64_t s) { return s == 0 ? tape_ : shard_tapes_[size_t(s - 1)]; }
  void split_batch();
  StepTiming forward_backward(int64_t step, std::chrono::steady_clock::time_point t0);
  StepTiming exact_model_step(SolvedModel& solved, int64_t step);
  StepTiming forward_backward_shards(int64_t step, std::chrono::steady_clock::time_point t0);
  // Before the first step: forward and backward on the task's largest batch
  // (Task::largest_train_batch), gradients zeroed, no update, so that the tapes' arenas and the
  // batch buffers are sized for the largest step, and node slots for twice its nodes
  // (Tape::make_room): no later step allocates.
  void reserve_memory(int64_t step);
  bool memory_reserved_ = false;
  // The batches of update `step`: batch_data_, or with unroll_ > 1 the window's batches.
  void fill_batches(int64_t step);
  // "unroll" K > 1 (tasks whose rows are patients): each update runs K consecutive task steps on
  // one tape, each forward continuing the last one's graph (models/unroll.hpp); an epoch is its
  // task steps in windows of K, the last one shorter.
  int64_t unroll_ = 1;
  int64_t task_steps_per_epoch_ = 1;
  std::deque<Batch> window_batches_;
  std::vector<const Batch*> window_;
  int64_t batch_;
  std::string dims_changed_;  // model sizes the task gives otherwise than the run's config
  int64_t steps_per_epoch_;
  bool has_epochs_ = false;
  int64_t total_steps_;
  LrSchedule schedule_;  // from the config and the step counts above
  double last_validation_loss_ = std::numeric_limits<double>::quiet_NaN();
};

// Resolves `memgrad train` words into a RunConfig: trainer flags, every model config key and every
// task setting as a flag (snake_case key "word_size" is --word-size). Throws UsageError.
// tool_flags gets the run options (threads, intervals, quiet, json, overwrite...) and "given":
// the name of every option on the command line.
RunConfig parse_run_flags(const std::vector<std::string>& words, std::string* out_dir,
                          std::string* resume_dir, nlohmann::json* tool_flags);

// A model setting the task decides (vocabulary and output sizes from its data, the output kind
// from its targets) given as a flag would be silently replaced: a UsageError names it.
void reject_task_set_flags(const std::vector<std::string>& given, Trainer& trainer);

// The `memgrad train` options that shape a training run (its directory, length and reporting).
// Commands that run training steps without making a run (bench, inspect) refuse them rather than
// ignore them.
inline constexpr const char* kRunOptions[] = {"out",        "overwrite",        "resume",
                                              "iterations", "epochs",           "log-every",
                                              "eval-every", "checkpoint-every", "quiet"};
// A UsageError "--NAME" + why for the first of `names` (without dashes) found in `given`, the
// options parse_run_flags saw.
void refuse_options(const std::vector<std::string>& given, std::span<const char* const> names,
                    const std::string& why);

}  // namespace memgrad::cli
