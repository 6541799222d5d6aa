#include "tools/trainer.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>

#include "engine/checkpoint.hpp"
#include "engine/json_text.hpp"
#include "engine/quote.hpp"
#include "engine/threads.hpp"
#include "models/solved_model.hpp"
#include "models/unroll.hpp"
#include "tools/args.hpp"

namespace memgrad::cli {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Trainer keys every run has, with the values that mean "off"; a model's train_defaults override.
const nlohmann::json kTrainBase = {{"optimizer", "adam"},  {"lr", 1e-3},
                                   {"momentum", 0.0},      {"batch", 32},
                                   {"iterations", 0},      {"epochs", 0},
                                   {"clip_norm", 0.0},     {"clip_norm_per_param", 0.0},
                                   {"clip_value", 0.0},    {"lr_halve_every_epochs", 0},
                                   {"lr_decay_start", 0},  {"lr_decay_final", 0.1},
                                   {"lr_cycle_epochs", 0}, {"lr_cycle_min", 0.0},
                                   {"shards", 1},          {"patience", 0},
                                   {"unroll", 1},          {"select_by", "score"}};

// The keys every run has, with a model's recipe over them.
nlohmann::json train_defaults(const ModelInfo& m) {
  nlohmann::json train = kTrainBase;
  for (auto& [k, v] : m.train_defaults.items()) train[k] = v;
  return train;
}

const ModelInfo& model_info(const std::string& name) {
  for (const ModelInfo& m : all_models())
    if (m.name == name) return m;
  std::string known;
  for (const ModelInfo& m : all_models()) known += " " + m.name;
  throw UsageError("unknown model " + quote(name) + " (known:" + known + ")");
}

const TaskInfo& task_info(const std::string& name) {
  for (const TaskInfo& t : all_tasks())
    if (t.name == name) return t;
  std::string known;
  for (const TaskInfo& t : all_tasks()) known += " " + t.name;
  throw UsageError("unknown task " + quote(name) + " (known:" + known + ")");
}

std::string flag_of(const std::string& key) {
  std::string f = key;
  for (char& c : f)
    if (c == '_') c = '-';
  return f;
}

// Converts a flag's text to the JSON type of the setting's default.
nlohmann::json convert(const std::string& flag, const std::string& text,
                       const nlohmann::json& like) {
  try {
    if (like.is_boolean()) {
      if (text == "true" || text == "1") return true;
      if (text == "false" || text == "0") return false;
      throw UsageError("--" + flag + " expects true or false, got '" + text + "'");
    }
    if (like.is_number_integer() || like.is_number_unsigned()) {
      size_t used = 0;
      const long long v = std::stoll(text, &used);
      if (used != text.size()) throw std::invalid_argument(text);
      return v;
    }
    if (like.is_number_float()) {
      size_t used = 0;
      const double v = std::stod(text, &used);
      if (used != text.size() || !std::isfinite(v)) throw std::invalid_argument(text);
      return v;
    }
    if (like.is_array()) {  // "1,2,3" or the JSON form "[1,2,3]" that --help prints
      if (text.size() >= 2 && text.front() == '[' && text.back() == ']')
        return convert(flag, text.substr(1, text.size() - 2), like);
      nlohmann::json out = nlohmann::json::array();
      size_t start = 0;
      while (start <= text.size()) {
        const size_t comma = text.find(',', start);
        const std::string part =
            text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        out.push_back(convert(flag, part, like.empty() ? nlohmann::json(0) : like[0]));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      return out;
    }
  } catch (const std::logic_error&) {
    const char* kind = like.is_number_integer() || like.is_number_unsigned() ? "a whole number"
                       : like.is_number()                                    ? "a number"
                                                                             : like.type_name();
    throw UsageError("--" + flag + " expects " + kind + ", got '" + text + "'");
  }
  if (like.is_string() || like.is_null()) {
    // A setting whose default is a string may also take a number (e.g. --babi-task 3 or all).
    return text;
  }
  throw UsageError("--" + flag + ": cannot set a value of type " + like.type_name());
}

std::unique_ptr<Optimizer> make_optimizer(const nlohmann::json& train, ParameterSet& params) {
  const std::string kind = train.at("optimizer").get<std::string>();
  const double lr = train.at("lr").get<double>();
  if (kind == "adam") return std::make_unique<Adam>(params, lr);
  if (kind == "sgd") return std::make_unique<Sgd>(params, lr, train.at("momentum").get<double>());
  if (kind == "rmsprop")
    return std::make_unique<RmsProp>(params, lr, 0.9, 1e-8, train.at("momentum").get<double>());
  throw UsageError("unknown optimizer '" + kind + "' (adam, sgd, rmsprop)");
}

}  // namespace

nlohmann::json RunConfig::to_json() const {
  return {{"task", task},
          {"task_settings", task_settings},
          {"model", model},
          {"model_config", model_config},
          {"train", train},
          {"seed", seed},
          {"dtype", dtype_name(dtype)}};
}

namespace {

// Whether `value` may stand where a setting's default is `like`: numbers for numbers (whole ones
// where the default is whole), the same JSON kind otherwise; with `number_as_string` a number for
// a string too (a task setting such as babi_task, "3" or 3).
bool fits(const nlohmann::json& value, const nlohmann::json& like, bool number_as_string) {
  if (like.is_number_integer() || like.is_number_unsigned())
    return value.is_number_integer() || value.is_number_unsigned();
  if (like.is_number()) return value.is_number();
  if (like.is_string()) return value.is_string() || (number_as_string && value.is_number());
  if (like.is_null()) return true;
  return value.type() == like.type();
}

// A value from config.json for a message: as written when it is short and printable, quote()d
// otherwise (a string or object of the file could be megabytes of anything).
std::string shown(const nlohmann::json& v) { return show(dump_json(v)); }

// Every key of `group` that `defaults` has must fit its default's type; an Error names the file,
// the group and the key.
void check_types(const nlohmann::json& group, const nlohmann::json& defaults, const char* what,
                 const std::string& source, bool number_as_string = false) {
  MG_CHECK(group.is_object(), source, ": '", what, "' must be a JSON object, got ", shown(group));
  for (auto it = group.begin(); it != group.end(); ++it)
    if (defaults.contains(it.key()))
      MG_CHECK(fits(*it, defaults.at(it.key()), number_as_string), source, ": ", what, " setting '",
               it.key(), "' is ", shown(*it), ", but must be of the type of its default ",
               dump_json(defaults.at(it.key())));
}

}  // namespace

nlohmann::json RunConfig::override_model_settings(const std::vector<std::string>& items) {
  nlohmann::json changed = nlohmann::json::object();
  const nlohmann::json& defaults = model_info(model).default_config;
  for (const std::string& item : items) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw UsageError("--set " + item + ": expected KEY=VALUE");
    const std::string key = item.substr(0, eq), text = item.substr(eq + 1);
    // A run saved before the key existed computed its default (or config_before's value).
    if (!model_config.contains(key) && defaults.contains(key)) model_config[key] = defaults.at(key);
    if (!model_config.contains(key))
      throw UsageError("--set " + item + ": model " + model + " has no setting '" + key + "'");
    nlohmann::json value = parse_json_or_discarded(text);
    if (value.is_discarded()) value = text;  // a bare word: a string
    const nlohmann::json& old = model_config.at(key);
    const bool same_type = old.is_number() ? value.is_number() : old.type() == value.type();
    if (!same_type)
      throw UsageError("--set " + item + ": " + key + " is " + std::string(old.type_name()) +
                       " in the run (" + dump_json(old) + "), got " + value.type_name());
    model_config[key] = value;
    changed[key] = value;
  }
  return changed;
}

RunConfig RunConfig::from_json(const nlohmann::json& j, const std::string& source) {
  try {
    RunConfig c;
    c.task = j.at("task").get<std::string>();
    c.model = j.at("model").get<std::string>();
    c.task_settings = j.at("task_settings");
    c.model_config = j.at("model_config");
    const ModelInfo& model = model_info(c.model);
    check_types(j.at("train"), train_defaults(model), "train", source);
    check_types(c.model_config, model.default_config, "model_config", source);
    for (auto it = model.config_before.begin(); it != model.config_before.end(); ++it)
      if (!c.model_config.contains(it.key())) c.model_config[it.key()] = *it;
    check_types(c.task_settings, task_info(c.task).default_settings, "task_settings", source, true);
    c.train = kTrainBase;  // a run written before a key existed gets its "off" value
    c.train.update(j.at("train"));
    MG_CHECK(j.at("seed").is_number_integer() && j.at("seed").get<int64_t>() >= 0, source,
             ": seed must be a whole number >= 0, got ", shown(j.at("seed")));
    c.seed = j.at("seed").get<uint64_t>();
    const std::string dt = j.at("dtype").get<std::string>();
    MG_CHECK(dt == "float32" || dt == "float64", source, ": dtype must be float32 or float64");
    c.dtype = dt == "float32" ? DType::f32 : DType::f64;
    return c;
  } catch (const nlohmann::json::exception& e) {
    fail(source, ": not a memgrad run config: ", escape(e.what(), 200));
  } catch (const UsageError& e) {  // an unknown model or task: say which file names it
    fail(source, ": ", e.what());
  }
}

void RunConfig::set_data_dir(const std::string& dir) {
  MG_CHECK(task_settings.contains("data_dir"), "--data: task ", task,
           " of the run reads no data folder");
  task_settings["data_dir"] = dir;
}

namespace {

// The training recipe's numbers, checked before anything trains: an Error names the setting.
void check_recipe(const nlohmann::json& train) {
  auto number = [&](const char* key) { return train.at(key).get<double>(); };
  auto flag = [](const char* key) {  // "clip_norm (--clip-norm)": in config.json or a flag
    std::string f = key;
    f += " (--";
    f += flag_of(key);
    return f + ")";
  };
  MG_CHECK(number("lr") > 0, flag("lr"), " must be > 0, got ", number("lr"));
  const double momentum = number("momentum");
  MG_CHECK(momentum >= 0 && momentum < 1, flag("momentum"), " must be in [0, 1), got ", momentum);
  MG_CHECK(momentum == 0 || train.at("optimizer") != "adam", flag("momentum"),
           " applies to sgd and rmsprop; adam has its own moment estimates (beta1 0.9)");
  for (const char* key :
       {"clip_norm", "clip_norm_per_param", "clip_value", "lr_decay_final", "lr_cycle_min"})
    MG_CHECK(number(key) >= 0, flag(key), " must be >= 0 (0 = off), got ", number(key));
  for (const char* key : {"iterations", "epochs", "lr_halve_every_epochs", "lr_decay_start",
                          "lr_cycle_epochs", "patience"})
    MG_CHECK(train.at(key).get<int64_t>() >= 0, flag(key), " must be >= 0, got ",
             train.at(key).get<int64_t>());
  MG_CHECK(train.at("lr_cycle_epochs").get<int64_t>() == 0 || number("lr_cycle_min") < number("lr"),
           flag("lr_cycle_min"), " must be below lr (--lr ", number("lr"),
           "), the peak of each cycle; got ", number("lr_cycle_min"));
  const std::string select_by = train.at("select_by").get<std::string>();
  MG_CHECK(select_by == "score" || select_by == "valid_loss", flag("select_by"),
           " must be score (the task's validation score) or valid_loss, got '", select_by, "'");
  MG_CHECK(train.at("unroll").get<int64_t>() >= 1, flag("unroll"),
           " must be >= 1 (1 = an update after every batch), got ",
           train.at("unroll").get<int64_t>());
}

}  // namespace

Trainer::Trainer(const RunConfig& config, Ranks* ranks)
    : config_(config), tape_(config.seed), ranks_(ranks) {
  check_recipe(config_.train);
  task_ = create_task(config_.task, config_.task_settings);
  nlohmann::json model_config = config_.model_config;
  const nlohmann::json dims = task_->model_dims();
  const ModelInfo& info = model_info(config_.model);
  for (auto it = dims.begin(); it != dims.end(); ++it) {
    MG_CHECK(info.default_config.contains(it.key()), "model ", config_.model, " does not fit task ",
             config_.task, ": the task sets '", it.key(), "', which ", config_.model,
             " does not have: ", config_.model, " is not a model of this task");
    // A saved run whose size the task now computes otherwise (other data, a changed loader):
    // said when its checkpoint does not fit.
    if (model_config.contains(it.key()) && model_config[it.key()] != *it) {
      if (!dims_changed_.empty()) dims_changed_ += ", ";
      dims_changed_ += it.key() + " " + it->dump() +
                       " (the run's config: " + dump_json(model_config[it.key()]) + ")";
    }
    model_config[it.key()] = *it;  // the task wins
  }
  config_.model_config = model_config;
  model_ = create_model(config_.model, model_config, config_.dtype, config_.seed);
  optimizer_ = make_optimizer(config_.train, model_->params());
  batch_ = config_.train.at("batch").get<int64_t>();
  MG_CHECK(batch_ >= 1, "batch must be at least 1, got ", batch_);
  shards_ = config_.train.at("shards").get<int64_t>();
  global_shards_ = shards_ * this->ranks();
  first_shard_ = ranks_ ? ranks_->rank() * shards_ : 0;
  MG_CHECK(shards_ >= 1 && global_shards_ <= batch_, "shards must be in [1, batch = ", batch_, "]",
           ranks_ ? " over all ranks (shards x ranks)" : "", ", got ", global_shards_);
  MG_CHECK(global_shards_ == 1 || model_->supports_shards(), "model ", config_.model,
           " cannot be trained in shards (its forward keeps state between calls); use --shards 1",
           ranks_ ? " and one process" : "");
  MG_CHECK(!config_.model_config.value("persistent_memory", false) || task_->rows_are_patients(),
           "persistent_memory carries each batch row's memory into the same row of the next batch "
           "(one patient's admissions); task ",
           config_.task, "'s samples are independent: set --persistent-memory false");
  // One tape: its parameter leaves write Parameter::grad directly (no flush pass). With shards,
  // every shard's tape flushes, in shard order, for the same sums on any thread count.
  tape_.set_param_grads_in_place(global_shards_ == 1);
  tape_.set_move_grads(true);           // training keeps only the parameters' gradients
  tape_.set_release_temporaries(true);  // and no value that no backward reads
  // Each shard draws its own noise (a stream of its own seed, by its index over all ranks), the
  // same for any thread count.
  auto shard_seed = [&](int64_t s) {
    return config.seed + uint64_t(first_shard_ + s) * 0x9E3779B97F4A7C15ull;
  };
  tape_.set_seed(shard_seed(0));
  for (int64_t s = 0; global_shards_ > 1 && s < shards_; ++s) {  // one: tape_ and batch_data_
    if (s > 0) {
      shard_tapes_.emplace_back(shard_seed(s));
      shard_tapes_.back().set_move_grads(true);
      shard_tapes_.back().set_release_temporaries(true);
    }
    shard_batches_.emplace_back();
    shard_upstream_.push_back(Tensor::scalar(1.0, config_.dtype));
    shard_out_.emplace_back();
  }
  unroll_ = config_.train.at("unroll").get<int64_t>();
  MG_CHECK(unroll_ == 1 || task_->rows_are_patients(), "unroll (--unroll ", unroll_,
           ") puts consecutive batches of the same patients on one tape; task ", config_.task,
           "'s batches are independent samples: set --unroll 1");
  MG_CHECK(unroll_ == 1 || model_->carries_state(), "unroll (--unroll ", unroll_, "): model ",
           config_.model,
           " carries no state from one batch to the next with these settings, so there is "
           "nothing to backpropagate through (DMNC: --persistent-memory true)");
  MG_CHECK(unroll_ == 1 || global_shards_ == 1, "unroll (--unroll ", unroll_,
           ") needs one tape: --shards 1 and one process");
  const int64_t task_steps = task_->steps_per_epoch(batch_);  // 0: a generator, no epochs
  has_epochs_ = task_steps > 0;
  task_steps_per_epoch_ = std::max<int64_t>(1, task_steps);
  steps_per_epoch_ = (task_steps_per_epoch_ + unroll_ - 1) / unroll_;  // updates per epoch
  if (unroll_ > 1) window_batches_.resize(size_t(unroll_));
  window_.reserve(size_t(unroll_));
  const int64_t epochs = config_.train.at("epochs").get<int64_t>();
  const int64_t iterations = config_.train.at("iterations").get<int64_t>();
  total_steps_ = epochs > 0 ? epochs * steps_per_epoch_ : iterations;
  MG_CHECK(total_steps_ >= 1, "nothing to train: set --iterations N or --epochs N");
  // The learning-rate schedule, read from the config once rather than at every step.
  const nlohmann::json& t = config_.train;
  schedule_.lr = t.at("lr").get<double>();
  schedule_.steps_per_epoch = steps_per_epoch_;
  schedule_.total_steps = total_steps_;
  schedule_.halve_every_epochs = t.at("lr_halve_every_epochs").get<int64_t>();
  schedule_.decay_start = t.at("lr_decay_start").get<int64_t>();
  schedule_.decay_final = t.at("lr_decay_final").get<double>();
  schedule_.cycle_epochs = t.at("lr_cycle_epochs").get<int64_t>();
  schedule_.cycle_min = t.at("lr_cycle_min").get<double>();
  MG_CHECK(
      !dynamic_cast<SolvedModel*>(model_.get()) || (global_shards_ == 1 && steps_per_epoch_ > 1),
      "model ", config_.model,
      " is solved exactly at each epoch's end, from all the training data at once: it "
      "needs one process, --shards 1 and at least two steps per epoch (a smaller --batch)");
  // Early stopping watches the epoch-end validation score of model selection.
  const int64_t patience = config_.train.at("patience").get<int64_t>();
  MG_CHECK(!selects_by_loss() || task_->validation_batches(batch_) > 0,
           "select_by valid_loss (--select-by) keeps the epoch of least validation loss, but task ",
           config_.task, " has no validation batches: --select-by score");
  MG_CHECK(patience == 0 || !selection_metric().empty(), "patience (--patience ", patience,
           ") stops training when the validation score has not improved for that many epochs, "
           "but task ",
           config_.task, " scores no epochs with these settings: set --patience 0");
}

double Trainer::current_lr(int64_t step) const {
  return scheduled_lr(schedule_, step) * model_->lr_multiplier();
}

size_t Trainer::tape_nodes() const {
  size_t n = tape_.size();
  for (const Tape& t : shard_tapes_) n += t.size();
  return n;
}

size_t Trainer::arena_high_water() const {
  size_t n = tape_.arena_high_water();
  for (const Tape& t : shard_tapes_) n += t.arena_high_water();
  return n;
}

size_t Trainer::released_bytes() const {
  size_t n = tape_.released_bytes();
  for (const Tape& t : shard_tapes_) n += t.released_bytes();
  return n;
}

void Trainer::set_detect_anomaly(bool on) {
  tape_.set_detect_anomaly(on);
  for (Tape& t : shard_tapes_) t.set_detect_anomaly(on);
}

// Rows [s B / S, (s+1) B / S) of every field of batch_data_ into shard s's batch.
void Trainer::split_batch() {
  const int64_t B = batch_data_.size, G = global_shards_;
  for (int64_t s = 0; s < shards_; ++s) {
    Batch& dst = shard_batches_[size_t(s)];
    const int64_t g = first_shard_ + s;  // over all ranks
    const int64_t begin = g * B / G, end = (g + 1) * B / G;
    for (const auto& [name, t] : batch_data_.fields()) {
      MG_CHECK(t.rank() >= 1 && t.dim(0) == B, "shards: batch field '", name, "' of shape ",
               t.shape(), " has no batch dimension of ", B, " rows");
      Shape shape = t.shape();
      shape[0] = end - begin;
      Tensor& part = dst.field(name, shape, t.dtype());
      const size_t row_bytes = t.bytes() / size_t(B);
      std::memcpy(part.raw(), static_cast<const char*>(t.raw()) + size_t(begin) * row_bytes,
                  size_t(end - begin) * row_bytes);
    }
    dst.size = end - begin;
  }
}

StepTiming Trainer::forward_backward_shards(int64_t step, Clock::time_point t0) {
  StepTiming timing;
  split_batch();
  parallel_for_each(shards_, [&](int64_t s) {
    Tape& tape = shard_tape(s);  // reset by train_step
    tape.set_step(uint64_t(step));
    shard_out_[size_t(s)] = model_->forward(tape, shard_batches_[size_t(s)], ForwardOptions{});
  });
  // The full batch's loss is the mean over all its terms: shard g counts with its share of them.
  // Every rank learns every shard's terms and loss, and adds them in the same (global) order.
  shard_stats_.resize(size_t(2 * shards_));
  for (int64_t s = 0; s < shards_; ++s) {
    const double t = shard_out_[size_t(s)].loss_terms;
    shard_stats_[size_t(2 * s)] = t > 0 ? t : double(shard_batches_[size_t(s)].size);
    shard_stats_[size_t(2 * s + 1)] = shard_out_[size_t(s)].loss.value().at(0);
  }
  const std::vector<double>* stats = &shard_stats_;
  if (ranks_) {
    all_shard_stats_.resize(size_t(2 * global_shards_));
    ranks_->all_gather(shard_stats_.data(), shard_stats_.size(), all_shard_stats_.data());
    stats = &all_shard_stats_;
  }
  auto terms = [&](int64_t g) { return (*stats)[size_t(2 * g)]; };
  double total_terms = 0;
  for (int64_t g = 0; g < global_shards_; ++g) total_terms += terms(g);
  for (int64_t g = 0; g < global_shards_; ++g) {
    const double weight = total_terms > 0 ? terms(g) / total_terms : 0.0;
    const int64_t s = g - first_shard_;
    if (s >= 0 && s < shards_) shard_upstream_[size_t(s)].set(0, weight);
    timing.loss += weight * (*stats)[size_t(2 * g + 1)];
  }
  timing.forward_ms = ms_since(t0);
  t0 = Clock::now();
  parallel_for_each(shards_, [&](int64_t s) {
    shard_tape(s).backward(shard_out_[size_t(s)].loss, shard_upstream_[size_t(s)], false);
  });
  for (int64_t s = 0; s < shards_; ++s) shard_tape(s).flush_param_grads();  // in a fixed order
  if (ranks_) sum_grads_over_ranks();
  timing.backward_ms = ms_since(t0);
  return timing;
}

// Every parameter's gradient, in one buffer (one collective per step rather than one per
// parameter), summed over the ranks in rank order, and back.
void Trainer::sum_grads_over_ranks() {
  ParameterSet& params = model_->params();
  size_t bytes = 0;
  for (size_t i = 0; i < params.size(); ++i) bytes += params[i].grad.bytes();
  flat_grads_.resize(bytes);  // the same size every step: allocated once
  size_t at = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    std::memcpy(flat_grads_.data() + at, params[i].grad.raw(), params[i].grad.bytes());
    at += params[i].grad.bytes();
  }
  ranks_->sum_in_rank_order(flat_grads_.data(), bytes / dtype_size(config_.dtype), config_.dtype);
  at = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    std::memcpy(params[i].grad.raw(), flat_grads_.data() + at, params[i].grad.bytes());
    at += params[i].grad.bytes();
  }
}

StepTiming Trainer::forward_backward(int64_t step, Clock::time_point t0) {
  if (global_shards_ > 1) return forward_backward_shards(step, t0);
  StepTiming timing;
  tape_.set_step(uint64_t(step));
  const Var loss = unroll_ == 1 ? model_->forward(tape_, batch_data_, ForwardOptions{}).loss
                                : unrolled_loss(*model_, tape_, window_);
  timing.loss = loss.value().at(0);
  timing.forward_ms = ms_since(t0);
  t0 = Clock::now();
  tape_.backward(loss);
  timing.backward_ms = ms_since(t0);
  return timing;
}

void Trainer::fill_batches(int64_t step) {
  if (unroll_ == 1) return task_->train_batch(step, batch_, config_.dtype, batch_data_);
  // Update `step` is window w of epoch e: the epoch's task steps [wK, min(P, (w+1)K)).
  const int64_t epoch = step / steps_per_epoch_, w = step % steps_per_epoch_;
  const int64_t first = w * unroll_, n = std::min(unroll_, task_steps_per_epoch_ - first);
  window_.clear();  // capacity kept: no allocation
  for (int64_t j = 0; j < n; ++j) {
    task_->train_batch(epoch * task_steps_per_epoch_ + first + j, batch_, config_.dtype,
                       window_batches_[size_t(j)]);
    window_.push_back(&window_batches_[size_t(j)]);
  }
}

void Trainer::reserve_memory(int64_t step) {
  for (int64_t s = 0; s < shards_; ++s) shard_tape(s).reset();
  if (unroll_ > 1) {  // a window of the largest batch, from a fresh carried state
    window_.clear();
    for (Batch& b : window_batches_) {
      task_->largest_train_batch(batch_, config_.dtype, b);
      window_.push_back(&b);
    }
    model_->reset_state();
  } else {
    task_->largest_train_batch(batch_, config_.dtype, batch_data_);
  }
  forward_backward(step, Clock::now());
  if (unroll_ > 1) model_->reset_state();
  for (int64_t s = 0; s < shards_; ++s) shard_tape(s).make_room(2);
  for (size_t i = 0; i < model_->params().size(); ++i) model_->params()[i].grad.zero();
  memory_reserved_ = true;
}

// A model with its own exact solver (models/solved_model.hpp): the first step shows it every
// training example of the step's epoch, one batch of one each, then the validation batches (a batch
// of the run's size would leave out the remainder of the division), in the epoch's order; batches
// are pure functions of the step, so a resumed run shows the same examples. A step's loss is its
// batch's under the current solution, and no step updates anything (the model's on_epoch_end
// solves). Each step still counts as an update, as checkpoints expect.
StepTiming Trainer::exact_model_step(SolvedModel& solved, int64_t step) {
  const auto t0 = Clock::now();
  if (solved.needs_data()) {
    const int64_t examples = task_->steps_per_epoch(1), epoch = step / steps_per_epoch_;
    for (int64_t k = 0; k < examples; ++k) {
      task_->train_batch(epoch * examples + k, 1, config_.dtype, batch_data_);
      solved.observe(batch_data_, k + 1 == examples);
    }
    const int64_t validation = task_->validation_batches(batch_);
    for (int64_t k = 0; k < validation; ++k) {
      task_->validation_batch(k, batch_, config_.dtype, batch_data_);
      solved.observe_validation(batch_data_, k + 1 == validation);
    }
  }
  tape_.reset();
  task_->train_batch(step, batch_, config_.dtype, batch_data_);
  StepTiming timing;
  {
    NoGradScope no_grad(tape_);
    timing.loss = model_->forward(tape_, batch_data_, ForwardOptions{}).loss.value().at(0);
  }
  timing.forward_ms = ms_since(t0);
  optimizer_->set_steps(optimizer_->steps() + 1);
  return timing;
}

StepTiming Trainer::train_step(int64_t step) {
  if (auto* solved = dynamic_cast<SolvedModel*>(model_.get()))
    return exact_model_step(*solved, step);
  if (!memory_reserved_) reserve_memory(step);
  ParameterSet& params = model_->params();
  auto t0 = Clock::now();
  // Reset first: a tape's input leaves share the batch buffers, which are refilled in place only
  // when no one else holds them.
  for (int64_t s = 0; s < shards_; ++s) shard_tape(s).reset();
  fill_batches(step);
  StepTiming timing = forward_backward(step, t0);
  t0 = Clock::now();
  const nlohmann::json& tr = config_.train;
  if (const double per = tr.at("clip_norm_per_param").get<double>(); per > 0) {
    for (size_t i = 0; i < params.size(); ++i) {
      Tensor& g = params[i].grad;
      double norm = 0;
      for (int64_t j = 0; j < g.numel(); ++j) norm += g.at(j) * g.at(j);
      norm = std::sqrt(norm);
      if (norm > per)
        MG_DISPATCH(g.dtype(), T, {
          T* p = g.data<T>();
          for (int64_t j = 0; j < g.numel(); ++j) p[j] *= T(per / norm);
        });
    }
  }
  // Global-norm clip, then value clip (the trainer's order: see ClipOrder), folded into the
  // update: one read of the gradients for their norm, then one update pass that also zeroes them.
  const GradClip clip =
      plan_grad_clip(params, tr.at("clip_norm").get<double>(), tr.at("clip_value").get<double>(),
                     ClipOrder::kNormThenValue);
  timing.grad_norm = clip.norm;
  optimizer_->set_learning_rate(current_lr(step));
  optimizer_->step(clip, /*zero_grads=*/true);
  model_->after_update();
  timing.optimizer_ms = ms_since(t0);
  return timing;
}

double Trainer::validation_loss() {
  const int64_t n = task_->validation_batches(batch_);
  if (n == 0) return std::numeric_limits<double>::quiet_NaN();
  Tape tape(config_.seed);
  NoGradScope no_grad(tape);
  Batch batch;
  double total = 0;
  ForwardOptions opts;
  opts.training = false;
  for (int64_t i = 0; i < n; ++i) {
    tape.reset();
    task_->validation_batch(i, batch_, config_.dtype, batch);
    total += model_->forward(tape, batch, opts).loss.value().at(0);
  }
  return total / double(n);
}

bool Trainer::selects_by_loss() const {
  return config_.train.at("select_by").get<std::string>() == "valid_loss";
}

std::string Trainer::selection_metric() const {
  return selects_by_loss() ? "valid_loss" : task_->selection_metric();
}

std::string Trainer::end_epoch(int64_t epoch) {
  const double vloss = validation_loss();
  last_validation_loss_ = vloss;
  std::string note = model_->on_epoch_end(epoch, vloss);
  return note;
}

template <class Use>
auto Trainer::with_predictor(bool teacher_forcing, Use&& use) {
  // Evaluation runs on the training tapes, which the next step resets anyway: its values take the
  // memory of the training step's, rather than an arena of their own beside them. A task may
  // predict its test batches in parallel (sum2seq does): each call takes a free tape, and one more
  // is made when more threads predict at once than there are training tapes. A model that keeps
  // state between calls (supports_shards() false) predicts one batch at a time.
  std::mutex pool_mutex, one_at_a_time;
  std::vector<Tape*> free_tapes;
  std::deque<Tape> extra_tapes;
  struct Saved {
    Tape* tape;
    uint64_t seed;
    bool grad;
  };
  std::vector<Saved> saved;
  for (int64_t s = shards_ - 1; s >= 0; --s) {  // (one tape: tape_)
    Tape& t = shard_tape(s);
    saved.push_back({&t, t.seed(), t.grad_enabled()});
    free_tapes.push_back(&t);
  }
  for (const Saved& s : saved) {
    s.tape->reset();
    s.tape->set_seed(config_.seed);  // the noise of evaluation, if any, is the run's own
    s.tape->set_grad_enabled(false);
  }
  const bool concurrent = model_->supports_shards();
  ForwardOptions opts;
  opts.training = false;
  opts.teacher_forcing = teacher_forcing;
  Predictor predict = [&](const Batch& batch) {
    std::unique_lock<std::mutex> lock(one_at_a_time, std::defer_lock);
    if (!concurrent) lock.lock();
    Tape* tape = nullptr;
    {
      const std::lock_guard<std::mutex> pool(pool_mutex);
      if (free_tapes.empty()) {
        extra_tapes.emplace_back(config_.seed).set_grad_enabled(false);
        free_tapes.push_back(&extra_tapes.back());
      }
      tape = free_tapes.back();
      free_tapes.pop_back();
    }
    tape->reset();
    tape->set_step(0);
    Tensor scores = model_->forward(*tape, batch, opts).predictions.value().clone();
    const std::lock_guard<std::mutex> pool(pool_mutex);
    free_tapes.push_back(tape);
    return scores;
  };
  // The training tapes as they were (reset by the next step) also when `use` throws.
  struct Restore {
    std::vector<Saved>& saved;
    ~Restore() {
      for (const Saved& s : saved) {
        s.tape->reset();
        s.tape->set_seed(s.seed);
        s.tape->set_grad_enabled(s.grad);
      }
    }
  } restore{saved};
  return use(predict);
}

nlohmann::json Trainer::evaluate(bool teacher_forcing) {
  nlohmann::json m = with_predictor(teacher_forcing, [&](const Predictor& predict) {
    return task_->evaluate(predict, batch_, config_.dtype);
  });
  // A model's own inference figures (Model::inference_stats), over the test examples only.
  model_->reset_inference_stats();
  if (model_->inference_stats().is_null() || task_->test_examples() == 0) return m;
  with_predictor(teacher_forcing, [&](const Predictor& predict) {
    Batch one;
    for (int64_t i = 0; i < task_->test_examples(); ++i) {
      task_->test_example(i, config_.dtype, one);
      predict(one);
    }
    return 0;
  });
  m["model"] = model_->inference_stats();
  return m;
}

std::string Trainer::scores_csv() {
  return with_predictor(false, [&](const Predictor& predict) {
    return task_->scores_csv(predict, batch_, config_.dtype);
  });
}

nlohmann::json Trainer::epoch_scores() {
  return with_predictor(false, [&](const Predictor& predict) {
    return task_->epoch_scores(predict, batch_, config_.dtype);
  });
}

std::optional<double> Trainer::selection_score() {
  return with_predictor(false, [&](const Predictor& predict) {
    return task_->selection_score(predict, batch_, config_.dtype);
  });
}

namespace {
// The first element of t that is NaN or infinite, as a message; empty when all are finite.
std::string non_finite(const Tensor& t, const std::string& name) {
  const int64_t i = first_non_finite(t);
  if (i < 0) return {};
  return "'" + name + "' holds " + std::to_string(t.at(i)) + " at element " + std::to_string(i);
}
}  // namespace

namespace {

// A checkpoint is a safetensors file (engine/checkpoint.hpp) of the tensors "param/<parameter>"
// and "optim/<optimizer state>", with the metadata format, next_step (the first step a resume
// trains), optimizer_steps (the updates made, equal to next_step), model_state (JSON: the model's
// schedule), run_config (JSON: the run's settings, as in config.json) and log_lines, loss_sum,
// loss_count, best_epoch (LogState; not in a file of parameters only, best.safetensors). The format
// tag of the checkpoints this memgrad writes: 2 added the checksums and the log state; 1 (without
// them) still loads, with a warning.
const std::string kCheckpointFormat = "memgrad-checkpoint-2";
const std::string kCheckpointFormat1 = "memgrad-checkpoint-1";

// Run settings a resume may change (config.json and the checkpoint then differ in them).
const char* const kResumeMayChange[] = {"train.iterations", "train.epochs", "train.patience",
                                        "task_settings.data_dir"};

const std::string& metadata_text(const TensorFile& file, const std::string& key,
                                 const std::string& path) {
  const auto it = file.metadata.find(key);
  MG_CHECK(it != file.metadata.end(), path, ": checkpoint metadata '", key, "' is missing");
  return it->second;
}

// A metadata value as a whole number >= 0, all of it: "12abc", "", "+3", " 1" are errors.
int64_t metadata_count(const TensorFile& file, const std::string& key, const std::string& path) {
  const std::string& text = metadata_text(file, key, path);
  int64_t v = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  MG_CHECK(ec == std::errc() && end == text.data() + text.size() && v >= 0, path,
           ": checkpoint metadata '", key, "' must be a whole number >= 0, got '", text, "'");
  return v;
}

// A metadata value as a finite number, all of it (written by to_chars, so it reads back exactly).
double metadata_number(const TensorFile& file, const std::string& key, const std::string& path) {
  const std::string& text = metadata_text(file, key, path);
  double v = std::numeric_limits<double>::quiet_NaN();
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  MG_CHECK(ec == std::errc() && end == text.data() + text.size() && std::isfinite(v), path,
           ": checkpoint metadata '", key, "' must be a finite number, got '", text, "'");
  return v;
}

nlohmann::json metadata_json(const TensorFile& file, const std::string& key,
                             const std::string& path) {
  try {
    return parse_json(metadata_text(file, key, path));
  } catch (const nlohmann::json::exception& e) {
    fail(path, ": checkpoint metadata '", key, "' is not valid JSON (", e.what(), ")");
  }
}

// The shortest text that reads back as exactly v.
std::string exact_text(double v) {
  char text[32];
  const auto [end, ec] = std::to_chars(text, text + sizeof text, v);
  return std::string(text, end);
}

// Loads a checkpoint of this or the previous format; an Error for anything else. A format-1
// file has no checksums: it loads with a warning.
TensorFile open_checkpoint(const std::string& path) {
  TensorFile file = load_safetensors(path);
  const auto it = file.metadata.find("format");
  const std::string format = it == file.metadata.end() ? "" : it->second;
  MG_CHECK(format == kCheckpointFormat || format == kCheckpointFormat1, path,
           ": checkpoint metadata 'format' is '", format, "', not a memgrad checkpoint (",
           kCheckpointFormat, " or ", kCheckpointFormat1, ")");
  MG_CHECK(file.checksummed || format == kCheckpointFormat1, path, ": a ", format,
           " file without its tensor checksums: the file was edited");
  if (!file.checksummed)
    std::fprintf(stderr,
                 "memgrad: warning: %s is a %s checkpoint, written before checksums: loaded "
                 "unverified\n",
                 path.c_str(), format.c_str());
  return file;
}

// Every leaf of a JSON object as "group.key" -> value (arrays are values).
void flatten(const nlohmann::json& j, const std::string& prefix,
             std::map<std::string, nlohmann::json>& out) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it->is_object())
      flatten(*it, key, out);
    else
      out[key] = *it;
  }
}

// The run settings saved in a checkpoint must be the run's (config.json): a checkpoint resumed
// under an edited learning rate would continue another run than the one it saved.
void check_same_run(const RunConfig& run, const TensorFile& file, const std::string& path) {
  const RunConfig saved = RunConfig::from_json(metadata_json(file, "run_config", path),
                                               path + " (metadata 'run_config')");
  std::map<std::string, nlohmann::json> now, then;
  flatten(run.to_json(), "", now);
  flatten(saved.to_json(), "", then);
  for (const char* key : kResumeMayChange) now.erase(key), then.erase(key);
  for (const auto& [key, value] : then) {
    const auto it = now.find(key);
    const std::string current = it == now.end() ? "missing" : dump_json(it->second);
    MG_CHECK(it != now.end() && it->second == value, path, ": run setting '", key, "' is ",
             dump_json(value), " in the checkpoint but ", current,
             " in the run's config.json: a run's settings cannot change (restore config.json, or "
             "start a new run with --out)");
  }
  for (const auto& [key, value] : now)
    MG_CHECK(then.count(key), path, ": run setting '", key, "' is ", dump_json(value),
             " in the run's config.json but missing in the checkpoint: a run's settings cannot "
             "change (restore config.json, or start a new run with --out)");
}

}  // namespace

void Trainer::save_checkpoint(const std::string& path, int64_t next_step,
                              const LogState* log) const {
  // A finite loss can still come with an update that overflows (a huge learning rate): such
  // parameters are not saved over the last good checkpoint.
  for (size_t i = 0; i < model_->params().size(); ++i) {
    const Parameter& p = model_->params()[i];
    const std::string bad = non_finite(p.value, p.name);
    MG_CHECK(bad.empty(), "training diverged before step ", next_step, ": parameter ", bad,
             "; the checkpoint was not written (a smaller --lr, or --detect-anomaly)");
  }
  TensorFile file;
  add_parameters(file, model_->params(), "param/");
  for (auto& [name, t] : optimizer_->state()) file.tensors.emplace_back("optim/" + name, *t);
  file.metadata["format"] = kCheckpointFormat;
  file.metadata["next_step"] = std::to_string(next_step);
  file.metadata["optimizer_steps"] = std::to_string(optimizer_->steps());
  file.metadata["model_state"] = dump_json(model_->training_state());
  file.metadata["run_config"] = dump_json(config_.to_json());
  file.metadata["ranks"] = std::to_string(ranks());
  if (log) {
    file.metadata["log_lines"] = std::to_string(log->lines);
    file.metadata["loss_sum"] = exact_text(log->loss_sum);
    file.metadata["loss_count"] = std::to_string(log->loss_count);
    file.metadata["best_epoch"] = dump_json(log->best_epoch.value_or(nullptr));
  }
  save_safetensors(path, file);
}

int64_t Trainer::load_checkpoint(const std::string& path, LogState* log) {
  const TensorFile file = open_checkpoint(path);
  check_same_run(config_, file, path);
  // The metadata and the optimizer state are checked before anything of the trainer changes.
  const int64_t next_step = metadata_count(file, "next_step", path);
  const int64_t optimizer_steps = metadata_count(file, "optimizer_steps", path);
  // Every training step is one update: a difference means the metadata were edited.
  MG_CHECK(optimizer_steps == next_step, path, ": checkpoint metadata 'next_step' (", next_step,
           ") and 'optimizer_steps' (", optimizer_steps, ") disagree; each step is one update");
  // The sum of the gradients over ranks is taken in another order with another rank count.
  const int64_t saved_ranks =
      file.metadata.count("ranks") ? metadata_count(file, "ranks", path) : 1;
  MG_CHECK(saved_ranks == ranks(), path, ": the checkpoint was written by a run of ", saved_ranks,
           saved_ranks == 1 ? " process" : " processes (mpirun -np N)", ", and this one runs as ",
           ranks(),
           ": the gradients' sum over processes, and so the run, depends on their number; "
           "resume with ",
           saved_ranks == 1 ? "one process" : "mpirun -np " + std::to_string(saved_ranks));
  LogState saved_log;  // a format-1 checkpoint: unknown
  if (file.metadata.at("format") != kCheckpointFormat1) {
    saved_log.lines = metadata_count(file, "log_lines", path);
    saved_log.loss_sum = metadata_number(file, "loss_sum", path);
    saved_log.loss_count = metadata_count(file, "loss_count", path);
    // (Format-2 checkpoints written before best_epoch existed lack it: best.json then decides,
    // as it did when they were written.)
    if (file.metadata.count("best_epoch"))
      saved_log.best_epoch = metadata_json(file, "best_epoch", path);
  }
  const nlohmann::json model_state = metadata_json(file, "model_state", path);
  for (auto& [name, t] : optimizer_->state()) {
    const Tensor* saved = file.find("optim/" + name);
    MG_CHECK(saved && saved->shape() == t->shape() && saved->dtype() == t->dtype(), path,
             ": optimizer state 'optim/", name, "' missing or of the wrong shape");
    const std::string bad = non_finite(*saved, "optim/" + name);
    MG_CHECK(bad.empty(), path, ": optimizer state ", bad, " (it must be finite)");
  }
  load_parameters(file, model_->params(), "param/", path);
  for (auto& [name, t] : optimizer_->state()) t->copy_from(*file.find("optim/" + name));
  optimizer_->set_steps(optimizer_steps);
  try {
    model_->set_training_state(model_state);
  } catch (const nlohmann::json::exception& e) {
    fail(path, ": checkpoint metadata 'model_state' is not valid (", e.what(), ")");
  }
  if (log) *log = saved_log;
  return next_step;
}

void Trainer::load_parameters_from(const std::string& path) {
  const TensorFile file = open_checkpoint(path);
  try {
    load_parameters(file, model_->params(), "param/", path);
  } catch (const Error& e) {
    if (dims_changed_.empty()) throw;
    // The task sets sizes of the model (vocabulary, sentence length, memory size) from its data:
    // other data, or a loader changed since the run, gives other shapes.
    fail(e.what(), "\n(the task now gives ", dims_changed_,
         ": other data than the run was trained on, or a loader changed since)");
  }
  if (auto it = file.metadata.find("model_state"); it != file.metadata.end()) {
    try {
      model_->set_training_state(parse_json(it->second));
    } catch (const nlohmann::json::exception& e) {
      fail(path, ": checkpoint metadata 'model_state' is not valid (", e.what(), ")");
    }
  }
}

RunConfig parse_run_flags(const std::vector<std::string>& words, std::string* out_dir,
                          std::string* resume_dir, nlohmann::json* tool_flags) {
  // First pass: which task and model, so their settings can be offered as flags.
  std::string task_name = "sum2seq", model_name = "dmnc-late";
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if ((w == "--task" || w == "--model") && i + 1 < words.size())
      (w == "--task" ? task_name : model_name) = words[i + 1];
    if (w.rfind("--task=", 0) == 0) task_name = w.substr(7);
    if (w.rfind("--model=", 0) == 0) model_name = w.substr(8);
  }
  const TaskInfo& ti = task_info(task_name);
  const ModelInfo& mi = model_info(model_name);
  nlohmann::json train = train_defaults(mi);
  nlohmann::json model_config = mi.default_config, task_settings = ti.default_settings;
  if (mi.task_settings.contains(task_name))
    for (const auto& [k, v] : mi.task_settings.at(task_name).items()) {
      MG_CHECK(task_settings.contains(k), "model ", model_name, " sets '", k, "' of task ",
               task_name, ", which has no such setting");
      task_settings[k] = v;
    }

  std::vector<std::string> valued = {
      "task",  "model",     "out",        "resume",           "seed", "threads",
      "dtype", "log-every", "eval-every", "checkpoint-every", "data"};
  for (auto* group : {&train, &model_config, &task_settings})
    for (auto& [k, v] : group->items()) valued.push_back(flag_of(k));
  Args args(words, {"detect-anomaly", "quiet", "help", "json", "overwrite"}, valued);

  if (!args.positional().empty())
    throw UsageError("unexpected argument '" + args.positional().front() + "' (options start --)");
  RunConfig rc;
  rc.task = task_name;
  rc.model = model_name;
  const long seed = args.get_int("seed", 1);
  if (seed < 0) throw UsageError("--seed must be a whole number >= 0, got " + std::to_string(seed));
  rc.seed = uint64_t(seed);
  const std::string dt = args.get("dtype", "float32");
  if (dt != "float32" && dt != "float64") throw UsageError("--dtype must be float32 or float64");
  rc.dtype = dt == "float32" ? DType::f32 : DType::f64;
  // Settings named by several groups (e.g. a task's "seed") are set in each.
  for (auto* group : {&train, &model_config, &task_settings})
    for (auto& [k, v] : group->items())
      if (auto text = args.get(flag_of(k))) v = convert(flag_of(k), *text, v);
  if (auto data = args.get("data"); data && task_settings.contains("data_dir"))
    task_settings["data_dir"] = *data;
  else if (data && !args.has("resume"))  // (a resumed run's task is read later)
    throw UsageError("--data: task " + task_name + " reads no data folder");
  if (args.has("epochs") && !args.has("iterations")) train["iterations"] = 0;
  if (args.has("iterations") && !args.has("epochs")) train["epochs"] = 0;
  rc.train = train;
  rc.model_config = model_config;
  rc.task_settings = task_settings;
  if (out_dir) *out_dir = args.get("out", "");
  if (resume_dir) *resume_dir = args.get("resume", "");
  nlohmann::json given = nlohmann::json::array();  // every option on the command line
  for (const std::string& name : valued)
    if (args.has(name)) given.push_back(name);
  for (const char* name : {"detect-anomaly", "quiet", "json", "overwrite"})
    if (args.has(name)) given.push_back(name);
  if (tool_flags)
    *tool_flags = {{"given", given},
                   {"threads", args.get_int("threads", 0)},
                   {"log_every", args.get_int("log-every", 0)},
                   {"eval_every", args.get_int("eval-every", 0)},
                   {"checkpoint_every", args.get_int("checkpoint-every", 0)},
                   {"detect_anomaly", args.has("detect-anomaly")},
                   {"quiet", args.has("quiet")},
                   {"json", args.has("json")},
                   {"overwrite", args.has("overwrite")},
                   {"data", args.get("data", "")},
                   {"help", args.has("help")}};
  return rc;
}

void refuse_options(const std::vector<std::string>& given, std::span<const char* const> names,
                    const std::string& why) {
  for (const char* name : names)
    if (std::find(given.begin(), given.end(), name) != given.end())
      throw UsageError(std::string("--") + name + why);
}

void reject_task_set_flags(const std::vector<std::string>& given, Trainer& trainer) {
  const nlohmann::json dims = trainer.task().model_dims();
  for (auto it = dims.begin(); it != dims.end(); ++it) {
    // A key that is also a task setting (babi's memory_size) is that setting's flag.
    if (trainer.config().task_settings.contains(it.key())) continue;
    const std::string flag = flag_of(it.key());
    if (std::find(given.begin(), given.end(), flag) != given.end())
      throw UsageError("--" + flag + " is set by task " + trainer.config().task + " (to " +
                       it->dump() + "); leave it out");
  }
}

}  // namespace memgrad::cli
