// memgrad train: trains a registered model on a registered task into a run directory.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "engine/json_text.hpp"
#include "engine/threads.hpp"
#include "tools/args.hpp"
#include "tools/commands.hpp"
#include "tools/model_selection.hpp"
#include "tools/progress.hpp"
#include "tools/ranks.hpp"
#include "tools/run_dir.hpp"
#include "tools/trainer.hpp"

namespace memgrad::cli {
namespace {

// The signal that asked the run to stop (SIGINT from Ctrl-C, SIGTERM from `kill`, `timeout` or a
// job scheduler), 0 while none has: the loop saves a checkpoint after the step in progress.
volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int signal) { g_interrupted = signal; }

// Catches SIGINT and SIGTERM for the training loop, and gives the previous handlers back after it
// (train also runs inside other programs, the tests).
struct StopSignals {
  using Handler = void (*)(int);
  Handler old_int, old_term;
  StopSignals() {
    g_interrupted = 0;
    old_int = std::signal(SIGINT, on_interrupt);
    old_term = std::signal(SIGTERM, on_interrupt);
  }
  ~StopSignals() {
    std::signal(SIGINT, old_int);
    std::signal(SIGTERM, old_term);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
};

const char* kHelp = R"(usage: memgrad train --task TASK --model MODEL [options] [--out DIR]
       memgrad train --resume DIR [--iterations N | --epochs N] [--patience N] [--threads N]
                     [--data DIR]

Trains MODEL on TASK and writes DIR (default runs/MODEL-TASK): config.json (every setting),
log.jsonl (one JSON line per logged step and per epoch), checkpoint.safetensors (parameters,
optimizer state, schedule; written atomically) and metrics.json (test metrics at the end). A task
that selects by a validation score (physionet2012: validation AUC-ROC) is scored at every epoch
end; the best epoch's parameters go to best.safetensors (best.json says which epoch) and are the
ones metrics.json, eval and inspect use; --select-by valid_loss keeps the epoch of least
validation loss instead (any task with validation batches; DMN+'s default); --patience P stops
training at the end of the epoch P epochs past the best one (early stopping; 0 = off).
Ctrl-C or SIGTERM (kill, timeout, a job scheduler) finishes the step in progress, saves a checkpoint
and stops (exit code 130 or 143); --resume DIR continues exactly where the run stopped (the
same losses as an uninterrupted run with the same seed and threads); a resumed run keeps its
settings, so only its length (and patience), thread count, data folder and reporting options may
be given.
A DIR that already holds a run is refused unless --overwrite.

run options:
  --seed N              initialisation, data order and noise (default 1)
  --threads N           TBB threads (default: all cores); OpenBLAS stays single-threaded
  --dtype float32|float64
  --log-every N         log and progress line interval in steps (default 50, or 1 epoch)
  --eval-every N        also evaluate on the test sets every N steps (default: only at the end)
  --checkpoint-every N  default 500 steps (or 1 epoch)
  --detect-anomaly      name the first op that produces a NaN or infinity
  --quiet               no progress output
  --overwrite           replace the run already in DIR (its checkpoint and metrics go)
  --data DIR            data folder of tasks that read files
Training recipe, model hyper-parameters and task settings: every key is a flag; their defaults for
a model and task are listed by `memgrad train --task TASK --model MODEL --help`.
  --shards S            split each batch into S row blocks, each on its own tape, run in parallel
                        on the threads: the whole batch's loss and gradient up to rounding; results
                        depend on S, not on --threads (default 1)
  --unroll K            tasks whose batch rows are patients (mimic-progression) with a model that
                        carries state between batches (--persistent-memory true, deepcare): each
                        update runs K consecutive admissions on one tape, so the loss backpropagates
                        through the carried memory across them (truncated BPTT over K; default 1:
                        an update after every admission, the DMNC paper's Algorithm 1)
)";

void print_defaults(const RunConfig& rc) {
  auto list = [](const char* title, const nlohmann::json& j) {
    std::printf("%s\n", title);
    for (auto& [k, v] : j.items()) {
      std::string flag = k;
      for (char& c : flag)
        if (c == '_') c = '-';
      std::printf("  --%-24s %s\n", flag.c_str(), dump_json(v).c_str());
    }
  };
  std::printf("\nmodels:");
  for (const ModelInfo& m : all_models()) std::printf(" %s", m.name.c_str());
  std::printf("\ntasks:");
  for (const TaskInfo& t : all_tasks()) std::printf(" %s", t.name.c_str());
  std::printf("\n\n");
  list(("training recipe of " + rc.model + ":").c_str(), rc.train);
  list(("hyper-parameters of " + rc.model + ":").c_str(), rc.model_config);
  list(("settings of task " + rc.task + ":").c_str(), rc.task_settings);
}

int train(const Words& words, Ranks* ranks);

}  // namespace

// Under mpirun (several ranks), an error on one rank stops them all with its message and exit
// code: the others would wait for it in the next collective forever. Rank 0 alone writes the run
// directory; every rank reads it (a --resume needs it on a file system all ranks see).
int cmd_train(const Words& words) {
  const std::unique_ptr<Ranks> ranks = join_ranks();
  if (!ranks) return train(words, nullptr);
  try {
    return train(words, ranks.get());
  } catch (const UsageError& e) {
    ranks->abort(std::string("memgrad train: ") + e.what(), 2);
  } catch (const Error& e) {
    ranks->abort(std::string("memgrad train: ") + e.what(), 2);
  } catch (const std::exception& e) {
    ranks->abort(std::string("memgrad train: internal error: ") + e.what(), 3);
  }
  return 2;  // (abort does not return)
}

namespace {

// The settings every rank must share, as text: everything that defines the run and how it
// writes; not --threads, --quiet, which may differ.
std::string shared_settings(const RunConfig& rc, const RunDir& dir, bool resuming,
                            const nlohmann::json& flags) {
  nlohmann::json j = {{"run", rc.to_json()}, {"dir", dir.path}, {"resume", resuming}};
  for (const char* key : {"log_every", "checkpoint_every", "eval_every", "overwrite"})
    j[key] = flags[key];
  return dump_json(j);
}

int train(const Words& words, Ranks* ranks) {
  const bool writer = !ranks || ranks->rank() == 0;  // of the run directory
  std::string out, resume;
  nlohmann::json flags;
  RunConfig rc = parse_run_flags(words, &out, &resume, &flags);
  if (flags["help"].get<bool>()) {
    std::fputs(kHelp, stdout);
    print_defaults(rc);
    return 0;
  }
  const std::vector<std::string> given = flags["given"].get<std::vector<std::string>>();
  auto was_given = [&](const std::string& name) {
    return std::find(given.begin(), given.end(), name) != given.end();
  };
  const bool resuming = was_given("resume");
  if (resuming && resume.empty()) throw UsageError("--resume needs a run directory");
  // The usage line's two required options: without them a typo'd command line would start a
  // long run of whatever the defaults are.
  for (const char* name : {"task", "model"})
    if (!resuming && !was_given(name))
      throw UsageError(std::string("--") + name +
                       " is required (memgrad train --task TASK --model MODEL, or --resume DIR)");
  if (resuming && was_given("out"))
    throw UsageError("--resume DIR continues the run in DIR; it takes no --out");
  if (was_given("out") && out.empty()) throw UsageError("--out needs a directory");
  for (const auto& [key, flag] :
       {std::pair{"log_every", "--log-every"}, std::pair{"checkpoint_every", "--checkpoint-every"},
        std::pair{"eval_every", "--eval-every"}})
    if (flags[key].get<int64_t>() < 0)
      throw UsageError(std::string(flag) + " must be >= 0 (0 = the default)");
  const int threads = set_process_threads(flags["threads"].get<long>());
  RunDir dir{resuming ? resume : (out.empty() ? "runs/" + rc.model + "-" + rc.task : out)};
  if (resuming) {
    // The run's own config wins: only the length of training, where the data lives, and how
    // the run reports may be given again.
    static const char* kResumable[] = {
        "resume",           "iterations", "epochs",         "patience", "threads", "log-every",
        "checkpoint-every", "eval-every", "detect-anomaly", "quiet",    "json",    "data"};
    for (const std::string& name : given)
      if (std::find(std::begin(kResumable), std::end(kResumable), name) == std::end(kResumable))
        throw UsageError("--" + name + " cannot change when resuming: " + dir.config() +
                         " fixes the run's settings (start a new run with --out to change it)");
    const nlohmann::json saved_json = dir.read_json(dir.config());
    RunConfig saved = RunConfig::from_json(saved_json, dir.config());
    if (was_given("iterations") || was_given("epochs")) {
      saved.train["iterations"] =
          was_given("iterations") ? rc.train["iterations"] : nlohmann::json(0);
      saved.train["epochs"] = was_given("epochs") ? rc.train["epochs"] : nlohmann::json(0);
    }
    if (was_given("patience")) saved.train["patience"] = rc.train["patience"];
    // (rc was parsed without knowing the run's task, so --data is read from the flags.)
    if (was_given("data")) saved.set_data_dir(flags["data"].get<std::string>());
    rc = saved;
    // Logging intervals of the run, unless given again.
    if (saved_json.contains("intervals")) {
      MG_CHECK(saved_json["intervals"].is_object(), dir.config(),
               ": 'intervals' must be a JSON object");
      for (const char* key : {"log_every", "checkpoint_every", "eval_every"})
        if (flags[key].get<int64_t>() == 0) {
          const nlohmann::json& v = saved_json["intervals"].value(key, nlohmann::json(0));
          MG_CHECK(v.is_number_integer(), dir.config(), ": intervals '", key,
                   "' must be a whole number, got ", dump_json(v));
          flags[key] = v;
        }
    }
  } else if (!flags["overwrite"].get<bool>()) {
    // A run is there once it saved something; a config alone is a start that failed.
    for (const std::string& file : {dir.checkpoint(), dir.metrics()})
      if (std::filesystem::exists(file))
        throw UsageError(dir.path + " already holds a run (" + file +
                         "): continue it with --resume " + dir.path +
                         ", or replace it with --overwrite, or choose another --out");
  }
  if (ranks) {
    const std::string mine = shared_settings(rc, dir, resuming, flags);
    const bool differs = ranks->broadcast(mine) != mine;
    if (ranks->any(differs))
      throw UsageError(std::string("the ranks of this mpirun disagree on the run's settings") +
                       (differs ? " (this rank's command line, or the config.json it read, is "
                                  "not rank 0's)"
                                : "") +
                       ": every rank must be given the same options");
  }
  Trainer trainer(rc, ranks);
  reject_task_set_flags(given, trainer);
  MG_CHECK(!ranks || trainer.selection_metric().empty(), "task ", rc.task,
           " selects the best epoch by ", trainer.selection_metric(),
           ", which a run over several processes (mpirun) does not do yet: run one process");
  trainer.set_detect_anomaly(flags["detect_anomaly"].get<bool>());
  if (writer) dir.create();
  std::vector<std::string> notes;
  if (writer) notes = dir.remove_stale_temporaries();
  const int64_t total = trainer.total_steps(), per_epoch = trainer.steps_per_epoch();
  const bool ends_epochs = trainer.has_epochs();  // a generator's steps end no epoch
  int64_t start = 0;
  LogState log;
  if (resuming) {
    start = trainer.load_checkpoint(dir.checkpoint(), &log);
    // A run resumed where it ended keeps its last lines (it trains no step that would redo them).
    if (writer) log.lines = dir.resume_log(start, start < total ? log.lines : -1, notes);
  } else if (writer) {
    // --overwrite: the old run's results go now, so that a failure cannot leave them beside the
    // new config (its checkpoint is replaced at the first save).
    std::error_code ec;
    for (const std::string& file : {dir.log(), dir.metrics(), dir.checkpoint()})
      std::filesystem::remove(file, ec);
    BestEpoch::remove(dir);
    log.lines = 0;
  }
  for (const std::string& note : notes) std::fprintf(stderr, "memgrad train: %s\n", note.c_str());
  BestEpoch best(dir, trainer);
  if (log.best_epoch) best.resume(*log.best_epoch);
  nlohmann::json config_json = trainer.config().to_json();
  config_json["intervals"] = {{"log_every", flags["log_every"]},
                              {"checkpoint_every", flags["checkpoint_every"]},
                              {"eval_every", flags["eval_every"]}};
  if (writer) dir.write_json(dir.config(), config_json);

  const int64_t log_every = flags["log_every"].get<int64_t>() > 0
                                ? flags["log_every"].get<int64_t>()
                                : (ends_epochs ? per_epoch : 50);
  const int64_t ckpt_every = flags["checkpoint_every"].get<int64_t>() > 0
                                 ? flags["checkpoint_every"].get<int64_t>()
                                 : (ends_epochs ? per_epoch : 500);
  const int64_t eval_every = flags["eval_every"].get<int64_t>();
  const bool quiet = flags["quiet"].get<bool>() || !writer;
  if (!quiet)
    std::fprintf(
        stderr, "training %s on %s: %lld steps (batch %lld, %lld parameters, %d threads%s) -> %s\n",
        rc.model.c_str(), rc.task.c_str(), (long long)total, (long long)trainer.batch_size(),
        (long long)trainer.model().params().count(), threads,
        ranks ? (" on each of " + std::to_string(ranks->size()) + " processes").c_str() : "",
        dir.path.c_str());
  const StopSignals stop_signals;
  Progress progress(start, total, log_every, quiet);
  auto loss_line = [&](int64_t step, const StepTiming& t) -> nlohmann::json {
    return {{"step", step},
            {"loss", t.loss},
            {"loss_mean", log.loss_sum / double(log.loss_count)},
            {"lr", trainer.current_lr(step)},
            {"grad_norm", t.grad_norm},
            {"steps_per_s", progress.steps_per_second()}};
  };
  auto append = [&](const nlohmann::json& line) {
    if (writer) dir.append_log(line);
    ++log.lines;
  };
  const int64_t patience = trainer.config().train.at("patience").get<int64_t>();
  StepTiming last;
  nlohmann::json metrics;  // the last step's test metrics, when an eval was due there
  int64_t end = total;     // the step training stops before (earlier when it stops early)
  for (int64_t step = start; step < total; ++step) {
    // A run resumed after it stopped early trains no further (unless given more --patience).
    if (ends_epochs && step % per_epoch == 0 && best.out_of_patience(step / per_epoch, patience)) {
      end = step;
      break;
    }
    const StepTiming t = last = trainer.train_step(step);
    // Under mpirun every rank stops at the same step when any was signalled.
    const int interrupted =
        ranks ? (ranks->any(g_interrupted != 0) ? (g_interrupted ? g_interrupted : SIGTERM) : 0)
              : g_interrupted;
    MG_CHECK(std::isfinite(t.loss) && std::isfinite(t.grad_norm), "training diverged: loss ",
             t.loss, ", gradient norm ", t.grad_norm, " at step ", step,
             " (rerun with --detect-anomaly to find the op)");
    log.loss_sum += t.loss;
    ++log.loss_count;
    const int64_t done = step + 1;
    char status[64];
    std::snprintf(status, sizeof status, "loss %.4f", t.loss);
    progress.update(done, status);
    // Every line depends on the step alone, never on where the run started or will stop, so that
    // a resumed run's log is the uninterrupted run's.
    if (done % log_every == 0) {
      append(loss_line(step, t));
      log.loss_sum = 0;
      log.loss_count = 0;
    }
    if (ends_epochs && done % per_epoch == 0) {
      const std::string note = trainer.end_epoch(done / per_epoch);
      nlohmann::json line = {{"step", step}, {"epoch", done / per_epoch}};
      if (!note.empty()) line["note"] = note;
      line.update(best.end_epoch(done / per_epoch, done));
      if (best.out_of_patience(done / per_epoch, patience)) {
        line["early_stop"] = true;
        end = done;
      }
      append(line);
    }
    if (eval_every > 0 && done % eval_every == 0 && writer) {
      nlohmann::json evaluation = trainer.evaluate();
      append({{"step", step}, {"eval", evaluation}});
      if (done == total) metrics = std::move(evaluation);  // the parameters the end evaluates
    }
    if (writer && (done % ckpt_every == 0 || done == end || interrupted)) {
      dir.sync_log();  // the lines the checkpoint counts are on disk before it is
      log.best_epoch = best.record();
      trainer.save_checkpoint(dir.checkpoint(), done, &log);
    }
    if (const int signal = interrupted) {
      progress.finish();
      if (writer)
        std::fprintf(stderr,
                     "%s: checkpoint saved at step %lld; continue with "
                     "`memgrad train --resume %s`\n",
                     signal == SIGTERM ? "terminated (SIGTERM)" : "interrupted (SIGINT)",
                     (long long)done, dir.path.c_str());
      return 128 + signal;  // the shell's code for a process ended by that signal
    }
    if (done == end) break;  // early stop
  }
  // The last step's loss line when it is off the interval: it closes this run's log only. The
  // checkpoint does not count it, so a resume that trains on replaces it by the interval's line.
  progress.finish();
  if (!writer) return 0;  // rank 0 evaluates and writes the results
  if (start < end && end % log_every != 0) dir.append_log(loss_line(end - 1, last));
  if (end < total && !quiet)
    std::fprintf(stderr, "stopped early after epoch %lld: no better %s in %lld epochs\n",
                 (long long)(end / per_epoch), best.metric().c_str(), (long long)patience);
  // The metrics of the best epoch's parameters when the task selects one, else of the last
  // step's (already evaluated when an eval was due there).
  const nlohmann::json selected = best.restore();
  if (!selected.is_null() || metrics.is_null()) metrics = trainer.evaluate();
  if (!selected.is_null()) metrics["selected"] = selected;
  if (end < total) metrics["early_stop"] = {{"epoch", end / per_epoch}, {"patience", patience}};
  dir.write_json(dir.metrics(), metrics);
  if (flags["json"].get<bool>())
    std::cout << dump_json(metrics, 2) << "\n";
  else
    std::cout << trainer.task().format_metrics(metrics);
  return 0;
}

}  // namespace
}  // namespace memgrad::cli
