// The model interface and registry. A model owns named parameters and a JSON config holding every
// hyper-parameter (with the paper's defaults), and builds its graph on a tape from a Batch.
#pragma once
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/batch.hpp"
#include "engine/parameter.hpp"
#include "engine/rng.hpp"
#include "engine/tape.hpp"

namespace memgrad {

// Inspection: gates, weightings and memory snapshots a model records when asked. Recording copies
// values, so it is off (null) in training and costs nothing then.
struct Trace {
  std::vector<std::pair<std::string, Tensor>> entries;  // in recording order, e.g. "t3/write_gate"
  // Per entry, the tape node it copies (-1: a value made outside the tape): memgrad inspect reads
  // the loss's gradient with respect to it (gradient flow through the steps).
  std::vector<NodeId> nodes;
  void record(const std::string& name, const Tensor& value) {
    entries.emplace_back(name, value.clone());
    nodes.push_back(-1);
  }
  void record(const std::string& name, Var v) {
    record(name, v.value());
    nodes.back() = v.id;
  }
};

struct ForwardOptions {
  bool training = true;         // dropout, noise and teacher forcing apply
  bool teacher_forcing = true;  // sequence decoders: feed the target (true) or own prediction
  Trace* trace = nullptr;       // non-null: record gates and memory for inspection
  // This forward continues the previous forward() on the same tape (the same batch rows, one
  // admission later): a model that carries state between batches (carries_state()) starts from
  // that forward's final state as recorded on the tape, so the loss's gradient flows back through
  // it into the earlier admission (models/unroll.hpp). False: the carried state, if any, enters as
  // values (data, no gradient), as after a tape reset.
  bool continues_graph = false;
};

struct ForwardResult {
  Var loss;         // scalar
  Var predictions;  // scores the task's metrics read: logits [B, C], [B, T, C], or [B, L]
  // How many terms the loss is the mean of (e.g. unmasked output tokens); 0 = one per sample.
  // Batch shards weight their losses by it (Trainer, "shards").
  double loss_terms = 0;
};

class Model {
 public:
  explicit Model(DType dtype) : params_(dtype) {}
  virtual ~Model() = default;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  virtual std::string name() const = 0;
  virtual nlohmann::json config() const = 0;
  virtual ForwardResult forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) = 0;
  ParameterSet& params() { return params_; }

  // Called after each epoch with the validation loss. A model with a schedule of its own (MemN2N's
  // linear start) adapts here and returns a note for the log; empty when nothing changed.
  virtual std::string on_epoch_end(int64_t epoch, double validation_loss) {
    (void)epoch, (void)validation_loss;
    return {};
  }
  // Called after every optimizer update (e.g. MemN2N re-zeroes the nil word's embedding rows).
  virtual void after_update() {}
  // True when forward() may run concurrently on different tapes and batches (it keeps no state
  // between calls), so that the trainer can run batch shards in parallel.
  virtual bool supports_shards() const { return false; }
  // True when forward() carries state from one batch into the same rows of the next (DMNC's
  // persistent memory, DeepCare's carried state): the batches of a task whose rows are patients
  // may then be unrolled on one tape (ForwardOptions::continues_graph).
  virtual bool carries_state() const { return false; }
  // Forgets the carried state: the next forward() starts every row afresh.
  virtual void reset_state() {}
  // Multiplier on the optimizer's learning rate for the current phase (e.g. a linear-start phase
  // trained at a different rate); 1 by default.
  virtual double lr_multiplier() const { return 1.0; }
  // Schedule state a checkpoint must carry for an exact resume (e.g. linear start on or off).
  virtual nlohmann::json training_state() const { return nlohmann::json::object(); }
  virtual void set_training_state(const nlohmann::json& state) { (void)state; }
  // Figures a model measures about its own inference forwards (training = false), summed since
  // the last reset (AMN: banks created and read, entities examined, decode time). Trainer::evaluate
  // resets them, runs the test examples once more and writes them into metrics.json as "model";
  // null (the default) when the model measures nothing.
  virtual void reset_inference_stats() {}
  virtual nlohmann::json inference_stats() const { return nullptr; }

 protected:
  ParameterSet params_;
};

// Builds a model from a config (missing keys take their defaults), a dtype and an init seed.
using ModelFactory =
    std::function<std::unique_ptr<Model>(const nlohmann::json& config, DType dtype, uint64_t seed)>;

struct ModelInfo {
  std::string name;
  std::string summary;
  ModelFactory create;
  // The model's default config (every hyper-parameter with the paper's default). Each key is also
  // a `memgrad train` flag: "word_size" is --word-size.
  nlohmann::json default_config;
  // The paper's training recipe, read by `memgrad train` (each key is a flag too): optimizer
  // ("adam"|"sgd"|"rmsprop"), lr, momentum, batch, iterations or epochs, clip_norm (global L2
  // norm), clip_norm_per_param (each parameter's gradient separately), clip_value,
  // lr_halve_every_epochs (0 = never), lr_decay_start and lr_decay_final (linear decay from that
  // step to lr * lr_decay_final at the last step; start 0 = constant), lr_cycle_epochs and
  // lr_cycle_min (triangular cycles between lr_cycle_min and lr; 0 = none): engine/lr_schedule.hpp.
  nlohmann::json train_defaults;
  // Gradient checks (memgrad gradcheck --model NAME, and the test suite, which fails for a model
  // without them): tiny configs, one per variant worth checking (e.g. both fusion modes, cache on,
  // set and sequence outputs), each with a "variant" label, and a generator of a tiny multi-step
  // batch holding the fields forward() reads.
  std::vector<nlohmann::json> check_configs;
  std::function<void(Rng& rng, DType dtype, Batch& batch)> check_batch;
  // The model's own defaults for settings of the tasks it reads, {task: {setting: value}}, put over
  // the task's defaults before the flags (e.g. encdec reads babi's "words" view: {"babi":
  // {"babi_view": "words"}}). A setting the task does not have is an Error.
  nlohmann::json task_settings = nlohmann::json::object();
  // Keys added to default_config after runs were saved without them, each with the value those
  // runs had in effect, {key: value}: a saved run's config.json that lacks the key gets it here
  // instead of today's default, so that eval, inspect and --resume compute what the run computed
  // (bow-attention's "scorer" became linear by default; its older runs scored with tanh).
  nlohmann::json config_before = nlohmann::json::object();
};

// Adds a model to the registry; a name registered already is an Error (and, from a static
// initialiser, stops the program at start-up).
void register_model(ModelInfo info);
const std::vector<ModelInfo>& all_models();
std::unique_ptr<Model> create_model(const std::string& name, const nlohmann::json& config,
                                    DType dtype, uint64_t seed);

}  // namespace memgrad
