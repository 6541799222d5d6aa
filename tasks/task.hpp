// The task interface and registry. A task provides training batches (a pure function of the step,
// so resumed runs see the same data), evaluates a model's predictions with the metrics library,
// and tells the model the sizes it must have (vocabularies, output classes). It knows nothing of
// models: evaluation receives a function from a batch to prediction scores.
#pragma once
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/batch.hpp"
#include "tasks/example_scores.hpp"

namespace memgrad {

// Scores for a batch, as the model's ForwardResult::predictions value: [B, C] class scores,
// [B, T, C] per-position scores, or [B, L] multi-label scores. The trainer's may be called from
// several threads at once (a task may predict its test batches in parallel).
using Predictor = std::function<Tensor(const Batch&)>;

class Task {
 public:
  virtual ~Task() = default;
  virtual std::string name() const = 0;
  // Every setting of the task (for config.json), including the data path if any.
  virtual nlohmann::json config() const = 0;
  // Sizes the model must be built with, merged into the model's config (e.g. "input_vocab").
  virtual nlohmann::json model_dims() const = 0;
  // Number of training steps that make one epoch (one pass over the data), at least 1 for a task
  // with training data (one batch that holds it all is an epoch of one step); generators, whose
  // samples never repeat, return 0: no epoch ends, so no validation, selection or patience.
  virtual int64_t steps_per_epoch(int64_t batch_size) const = 0;
  // Fills `batch` with the training batch of `step` (a pure function of the seed and step).
  virtual void train_batch(int64_t step, int64_t batch_size, DType dtype, Batch& batch) = 0;
  // A batch as large as any train_batch() can be, in every field's shape and in the work a model
  // does on it (sum2seq: every sample at the longest length). The trainer runs it forward and
  // backward once before its first step, so that its tapes' memory is sized for the largest step
  // and later steps allocate nothing. By default, the batch of step 0: for tasks whose batches all
  // have the same shapes.
  virtual void largest_train_batch(int64_t batch_size, DType dtype, Batch& batch) {
    train_batch(0, batch_size, dtype, batch);
  }
  // Validation loss batches (may be empty): callers sum the model's loss over them.
  virtual int64_t validation_batches(int64_t batch_size) const { return 0 * batch_size; }
  virtual void validation_batch(int64_t index, int64_t batch_size, DType dtype, Batch& batch) {
    (void)index, (void)batch_size, (void)dtype, (void)batch;
  }
  // Test metrics of a predictor, as written to metrics.json.
  virtual nlohmann::json evaluate(const Predictor& predict, int64_t batch_size, DType dtype) = 0;
  // Every example evaluate() scores, with its id, split, label and score (one score per example:
  // binary tasks), for `memgrad eval --scores`. An Error for a task that has none (the default).
  virtual std::vector<ExampleScore> example_scores(const Predictor& predict, int64_t batch_size,
                                                   DType dtype);
  // The text of `memgrad eval --scores FILE`: example_scores_csv of example_scores() by default;
  // multi-label tasks write one line per (example, label) instead (tasks/label_scores.hpp).
  virtual std::string scores_csv(const Predictor& predict, int64_t batch_size, DType dtype);
  // A one-table summary of evaluate()'s result for a terminal.
  virtual std::string format_metrics(const nlohmann::json& metrics) const = 0;

  // Model selection: a score on validation data (higher is better) by which a trainer keeps the
  // best parameters over epochs, and its name; nullopt (the default) when the task selects
  // nothing and training keeps the last parameters.
  virtual std::optional<double> selection_score(const Predictor& predict, int64_t batch_size,
                                                DType dtype) {
    (void)predict, (void)batch_size, (void)dtype;
    return std::nullopt;
  }
  virtual std::string selection_metric() const { return {}; }
  // The numbers of an epoch's log line: {selection_metric(): selection_score()} by default; a task
  // may add validation numbers computed in the same pass (codiesp: dev P@5, the C-MemNN paper's
  // Fig. 3). The selection score must be under selection_metric() (null when undefined).
  virtual nlohmann::json epoch_scores(const Predictor& predict, int64_t batch_size, DType dtype);

  // True when row r of every batch is the same patient, admission after admission, so that a
  // model may carry its memory from one batch to the next (DMNC's persistent memory).
  virtual bool rows_are_patients() const { return false; }

  // ---- single samples, for `memgrad inspect`. A task that has none says so in an Error.
  // How many test samples test_example() can give.
  virtual int64_t test_examples() const { return 0; }
  // Test sample `index` (0 <= index < test_examples()) as a batch of one.
  virtual void test_example(int64_t index, DType dtype, Batch& batch);
  // The batches of one that come before test sample `index` in its row (a patient's earlier
  // admissions, which a model that carries memory from batch to batch reads first): how many (0
  // by default), and batch k of them (0 <= k < that many), in order. inspect runs them, untraced,
  // before the sample.
  virtual int64_t test_example_context(int64_t index) const {
    (void)index;
    return 0;
  }
  virtual void test_example_context_batch(int64_t index, int64_t k, DType dtype, Batch& batch);
  // A batch of one from a sample written in the task's own notation (sum2seq: "3 1 4 / 1 5 9").
  virtual void text_example(const std::string& text, DType dtype, Batch& batch);
  // A batch of one with the model's prediction scores for it, as named lines for a reader
  // ("input", "target", "predicted", ...), in order.
  using Lines = std::vector<std::pair<std::string, std::string>>;
  virtual Lines describe_example(const Batch& batch, const Tensor& predictions) const;
  // What a batch of one observed at each of the model's time steps, for figures that say which
  // inputs a memory holds (`memgrad inspect --html`): per step, (variable name, value) pairs.
  // Empty (the default) for a task without named inputs per step.
  struct StepObservations {
    std::string step_name;  // what one step is, e.g. "hour"
    std::vector<std::vector<std::pair<std::string, double>>> steps;
  };
  virtual StepObservations step_observations(const Batch& batch) const;
};

// Creates a task from its settings (missing keys take defaults); data tasks read `data_dir`.
using TaskFactory = std::function<std::unique_ptr<Task>(const nlohmann::json& settings)>;

struct TaskInfo {
  std::string name;
  std::string summary;
  TaskFactory create;
  // Every setting with its default. Each key is also a `memgrad train` flag: "data_dir" is
  // --data-dir (and --data is accepted as its short form).
  nlohmann::json default_settings;
};

// A task's settings: `defaults` with the keys of `user` (a JSON object or null) put over them; an
// Error "<task>: unknown setting 'k' (known: ...)" for a key the defaults lack.
nlohmann::json merge_task_settings(const std::string& task, const nlohmann::json& defaults,
                                   const nlohmann::json& user);

// Setting `key` of a task's settings as a whole number in [lo, hi]; an Error "<task>: key must
// be a whole number in [lo, hi], got v" otherwise.
int64_t setting_int(const nlohmann::json& settings, const std::string& task, const char* key,
                    int64_t lo, int64_t hi);
// "  parameters of epoch E (best METRIC V)\n" for metrics that hold the trainer's "selected"
// entry, "" otherwise (a line of format_metrics).
std::string selected_line(const nlohmann::json& metrics);

void register_task(TaskInfo info);
const std::vector<TaskInfo>& all_tasks();
std::unique_ptr<Task> create_task(const std::string& name, const nlohmann::json& settings);

}  // namespace memgrad
