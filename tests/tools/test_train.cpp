// memgrad train / eval end to end on a tiny sum2seq run: the run directory, exact resume, eval.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>

#include "engine/checkpoint.hpp"
#include "engine/error.hpp"
#include "engine/json_text.hpp"
#include "tests/test_util.hpp"
#include "tests/tools/train_util.hpp"
#include "tools/args.hpp"
#include "tools/commands.hpp"

using namespace memgrad;
using namespace memgrad::cli;
using namespace memgrad::test;
namespace fs = std::filesystem;

TEST_CASE("a resumed run reproduces the uninterrupted run's losses exactly") {
  TempDir tmp;
  const fs::path whole = tmp.path / "whole", split = tmp.path / "split";
  REQUIRE(cmd_train(tiny_run(whole, 8)) == 0);
  REQUIRE(cmd_train(tiny_run(split, 4)) == 0);
  REQUIRE(cmd_train({"--resume", split.string(), "--iterations", "8", "--quiet"}) == 0);
  const std::vector<double> a = logged_losses(whole), b = logged_losses(split);
  REQUIRE(a.size() == 8);
  CHECK(a == b);
  for (const char* f : {"config.json", "log.jsonl", "checkpoint.safetensors", "metrics.json"})
    CHECK(fs::exists(whole / f));
  std::ifstream m(whole / "metrics.json");
  const auto metrics = parse_json(m);
  CHECK(metrics["accuracy"].contains("3"));
  CHECK(metrics["accuracy"].contains("5"));
  // eval of the saved run gives the metrics the run wrote.
  const fs::path eval_out = tmp.path / "eval.json";
  {
    std::ofstream redirect(eval_out);
    auto* old = std::cout.rdbuf(redirect.rdbuf());
    const int rc = cmd_eval({"--checkpoint", whole.string(), "--json", "--threads", "1"});
    std::cout.rdbuf(old);
    CHECK(rc == 0);
  }
  std::ifstream e(eval_out);
  CHECK(parse_json(e)["accuracy"] == metrics["accuracy"]);
}

TEST_CASE("a resumed run with batch shards reproduces the uninterrupted run's losses exactly") {
  TempDir tmp;
  const fs::path whole = tmp.path / "whole", split = tmp.path / "split";
  auto sharded = [](Words w) {
    for (const char* x : {"--shards", "2"}) w.push_back(x);
    return w;
  };
  REQUIRE(cmd_train(sharded(tiny_run(whole, 6))) == 0);
  REQUIRE(cmd_train(sharded(tiny_run(split, 3))) == 0);
  // The shard count comes back from the run directory; the thread count may differ.
  REQUIRE(cmd_train(
              {"--resume", split.string(), "--iterations", "6", "--threads", "2", "--quiet"}) == 0);
  const std::vector<double> a = logged_losses(whole), b = logged_losses(split);
  REQUIRE(a.size() == 6);
  CHECK(a == b);
}

TEST_CASE("bad usage is a UsageError naming the problem") {
  CHECK_THROWS_WITH_AS(cmd_train({"--model", "no-such-model"}),
                       doctest::Contains("unknown model 'no-such-model'"), UsageError);
  CHECK_THROWS_WITH_AS(cmd_train({"--model", "dual-lstm", "--hidden", "many"}),
                       doctest::Contains("--hidden expects"), UsageError);
  CHECK_THROWS_WITH_AS(cmd_train({"--model", "dual-lstm", "--bogus", "1"}),
                       doctest::Contains("unknown option --bogus"), UsageError);
}

TEST_CASE("train requires --task and --model, as its usage line says, unless --resume") {
  TempDir tmp;
  const std::string out = (tmp.path / "run").string();
  CHECK_THROWS_WITH_AS(cmd_train({"--iterations", "1", "--out", out}),
                       doctest::Contains("--task is required"), UsageError);
  CHECK_THROWS_WITH_AS(cmd_train({"--task", "sum2seq", "--iterations", "1", "--out", out}),
                       doctest::Contains("--model is required"), UsageError);
  CHECK_THROWS_WITH_AS(cmd_train({"--model=lstm", "--iterations", "1", "--out", out}),
                       doctest::Contains("--task is required"), UsageError);
  CHECK_FALSE(fs::exists(out));  // refused before anything was written
}

TEST_CASE("an option given twice is a UsageError naming it, never 'last one wins'") {
  TempDir tmp;
  const Words run = tiny_run(tmp.path / "run", 1);
  const std::pair<Words, const char*> cases[] = {
      {{"--seed", "6"}, "option --seed is given twice"},
      {{"--seed=6"}, "option --seed is given twice"},
      {{"--quiet"}, "option --quiet is given twice"},
      {{"--model", "lstm"}, "option --model is given twice"},
      {{"--hidden", "7"}, "option --hidden is given twice"},
  };
  for (const auto& [extra, message] : cases) {
    CAPTURE(extra[0]);
    Words w = run;
    w.insert(w.end(), extra.begin(), extra.end());
    CHECK_THROWS_WITH_AS(cmd_train(w), doctest::Contains(message), UsageError);
  }
  CHECK_FALSE(fs::exists(tmp.path / "run"));
  // The words a command takes before handing the rest on (inspect's, bench's) are checked too.
  Words words = {"--sample", "1", "--x", "--sample=2"};
  CHECK_THROWS_WITH_AS(take_option(words, "sample"),
                       doctest::Contains("option --sample is given twice"), UsageError);
  words = {"--tape", "--x", "--tape"};
  CHECK_THROWS_WITH_AS(take_flag(words, "tape"), doctest::Contains("option --tape is given twice"),
                       UsageError);
  words = {"--tape", "--x"};
  CHECK(take_flag(words, "tape"));
  CHECK(words == Words{"--x"});
  CHECK_THROWS_WITH_AS(cmd_eval({"--checkpoint", "a", "--checkpoint", "b"}),
                       doctest::Contains("option --checkpoint is given twice"), UsageError);
}

TEST_CASE("bench --json has the issue's fields, and --profile a row per op") {
  TempDir tmp;
  const fs::path out = tmp.path / "bench.json";
  {
    std::ofstream redirect(out);
    auto* old = std::cout.rdbuf(redirect.rdbuf());
    const int rc =
        cmd_bench({"--model",   "dmnc-late", "--task",      "sum2seq", "--embedding",    "4",
                   "--hidden",  "6",         "--word-size", "5",       "--memory-slots", "4",
                   "--batch",   "3",         "--lmax",      "3",       "--steps",        "2",
                   "--threads", "1",         "--profile",   "--json"});
    std::cout.rdbuf(old);
    REQUIRE(rc == 0);
  }
  std::ifstream in(out);
  const nlohmann::json j = parse_json(in);
  for (const char* key :
       {"model", "task", "batch", "threads", "ms_per_step", "forward_ms", "backward_ms",
        "optimizer_ms", "steps_per_s", "allocs_per_step", "peak_rss_mib"})
    CHECK_MESSAGE(j.contains(key), key);
  CHECK(j["model"] == "dmnc-late");
  CHECK(j["batch"] == 3);
  REQUIRE(j.contains("profile"));
  double profiled = 0;
  bool has_lstm = false;
  for (const auto& row : j["profile"]) {
    CHECK(row["nodes_per_step"].get<double>() > 0);
    CHECK(row["value_mib"].get<double>() >= 0);
    if (row["op"] == "lstm_cell") CHECK(row["value_mib"].get<double>() > 0);
    profiled += row["forward_ms"].get<double>() + row["backward_ms"].get<double>();
    has_lstm = has_lstm || row["op"] == "lstm_cell";
  }
  CHECK(has_lstm);
  CHECK(profiled > 0);
}

TEST_CASE("lr_decay_start decays the learning rate linearly to lr * lr_decay_final") {
  TempDir tmp;
  Words w = tiny_run(tmp.path / "run", 8);
  for (const char* f : {"--lr", "0.01", "--lr-decay-start", "4", "--lr-decay-final", "0.5"})
    w.push_back(f);
  REQUIRE(cmd_train(w) == 0);
  std::ifstream in(tmp.path / "run" / "log.jsonl");
  std::vector<double> lr;
  std::string line;
  while (std::getline(in, line)) {
    auto j = parse_json(line);
    if (j.contains("lr")) lr.push_back(j["lr"].get<double>());
  }
  REQUIRE(lr.size() == 8);
  for (int s = 0; s < 8; ++s) {
    const double want = s < 4 ? 0.01 : 0.01 * (1.0 - 0.5 * double(s - 4) / 4.0);
    CHECK(lr[size_t(s)] == doctest::Approx(want).epsilon(1e-12));
  }
}

TEST_CASE("run options: --model=NAME form, resume keeps the run's settings, --overwrite") {
  TempDir tmp;
  const fs::path run = tmp.path / "run";
  Words w = tiny_run(run, 2);
  // The NAME=VALUE form picks the model as the two-word form does.
  std::replace(w.begin(), w.end(), std::string("dual-lstm"), std::string("lstm"));
  w.erase(std::find(w.begin(), w.end(), std::string("--model")));
  w.erase(std::find(w.begin(), w.end(), std::string("lstm")));
  w.push_back("--model=lstm");
  REQUIRE(cmd_train(w) == 0);
  std::ifstream c(run / "config.json");
  CHECK(parse_json(c)["model"] == "lstm");

  // Resuming: the length may grow (in either form); the run's settings may not change.
  REQUIRE(cmd_train({"--resume", run.string(), "--iterations=4", "--quiet"}) == 0);
  CHECK(logged_losses(run).size() == 4);
  CHECK_THROWS_WITH_AS(cmd_train({"--resume", run.string(), "--iterations", "6", "--lr", "5"}),
                       doctest::Contains("--lr cannot change when resuming"), UsageError);
  CHECK_THROWS_WITH_AS(cmd_train({"--resume", run.string(), "--out", (tmp.path / "x").string()}),
                       doctest::Contains("takes no --out"), UsageError);
  CHECK_THROWS_WITH_AS(cmd_train({"--resume", ""}), doctest::Contains("--resume needs a run"),
                       UsageError);

  // A directory that holds a run is not trained into again unless --overwrite.
  CHECK_THROWS_WITH_AS(cmd_train(tiny_run(run, 2)), doctest::Contains("already holds a run"),
                       UsageError);
  Words again = tiny_run(run, 2);
  again.push_back("--overwrite");
  REQUIRE(cmd_train(again) == 0);
  std::ifstream c2(run / "config.json");
  CHECK(parse_json(c2)["model"] == "dual-lstm");
  CHECK(logged_losses(run).size() == 2);
}

TEST_CASE("settings that cannot work are errors before training starts") {
  TempDir tmp;
  auto with = [&](const Words& extra) {
    return with_words(tiny_run(tmp.path / "never", 2), extra);
  };
  const std::pair<Words, const char*> cases[] = {
      {{"--lr", "-1"}, "lr (--lr) must be > 0, got -1"},
      {{"--momentum", "5", "--optimizer", "sgd"}, "momentum (--momentum) must be in [0, 1), got 5"},
      {{"--momentum", "0.5"}, "momentum (--momentum) applies to sgd and rmsprop"},
      {{"--clip-norm", "-1"}, "clip_norm (--clip-norm) must be >= 0 (0 = off), got -1"},
      {{"--lr-decay-final", "-3"}, "lr_decay_final (--lr-decay-final) must be >= 0"},
      {{"--input-vocab", "3"}, "--input-vocab is set by task sum2seq (to 52"},
      {{"--output", "set"}, "--output is set by task sum2seq (to \"sequence\"); leave it out"},
      {{"--lmax", "100000"}, "lmax must be a whole number in [1, 1000], got 100000"},
      {{"--test-lmax", "3,5000"}, "test_lmax values must be a whole number in [1, 1000]"},
      {{"--hidden", "1.5"}, "--hidden expects a whole number, got '1.5'"},
      {{"--input-vocab2", "5"}, "enc2.embedding: token id"},  // fails at the first step
      {{"--seed", "-1"}, "--seed must be a whole number >= 0, got -1"},
  };
  for (const auto& [extra, message] : cases) {
    CAPTURE(extra[0]);
    CHECK_THROWS_WITH(cmd_train(with(extra)), doctest::Contains(message));
  }
  CHECK_FALSE(fs::exists(tmp.path / "never" / "checkpoint.safetensors"));
  CHECK_THROWS_WITH(
      cmd_train({"--task", "sum2seq", "--model", "memn2n", "--out", (tmp.path / "m").string()}),
      doctest::Contains("model memn2n does not fit task sum2seq"));
}

TEST_CASE("a run directory with bad contents is an error naming the file") {
  TempDir tmp;
  const fs::path run = tmp.path / "run";
  REQUIRE(cmd_train(tiny_run(run, 2)) == 0);
  const std::string config = (run / "config.json").string();
  const std::string checkpoint = (run / "checkpoint.safetensors").string();
  std::ifstream in(config);
  const nlohmann::json good = parse_json(in);

  auto write_config = [&](const nlohmann::json& j) { std::ofstream(config) << dump_json(j); };
  nlohmann::json bad = good;
  bad["train"]["batch"] = "4";
  write_config(bad);
  CHECK_THROWS_WITH_AS(cmd_eval({"--checkpoint", run.string()}),
                       doctest::Contains("config.json: train setting 'batch' is \"4\""), Error);
  bad = good;
  bad["task_settings"]["test_lmax"] = "3";
  write_config(bad);
  CHECK_THROWS_WITH_AS(cmd_eval({"--checkpoint", run.string()}),
                       doctest::Contains("task_settings setting 'test_lmax'"), Error);
  write_config(good);
  CHECK_THROWS_WITH_AS(cmd_eval({"--checkpoint", ""}), doctest::Contains("--checkpoint DIR"),
                       UsageError);

  // A parameter that is not finite, and metadata out of range.
  TensorFile file = load_safetensors(checkpoint);
  Tensor* first = nullptr;
  for (auto& [name, t] : file.tensors)
    if (!first && name.rfind("param/", 0) == 0) first = &t;
  REQUIRE(first != nullptr);
  const double kept = first->at(0);
  first->set(0, std::numeric_limits<double>::quiet_NaN());
  save_safetensors(checkpoint, file);
  CHECK_THROWS_WITH_AS(cmd_eval({"--checkpoint", run.string()}),
                       doctest::Contains("holds nan at element 0 (a parameter must be finite)"),
                       Error);
  first->set(0, kept);
  file.metadata["next_step"] = "-5";
  save_safetensors(checkpoint, file);
  CHECK_THROWS_WITH_AS(cmd_train({"--resume", run.string(), "--quiet"}),
                       doctest::Contains("'next_step' must be a whole number >= 0, got '-5'"),
                       Error);
}

TEST_CASE("a bAbI run: a task setting named like a model size, resuming with its data moved") {
  TempDir tmp;
  for (const char* where : {"a", "b"}) write_babi_qa1(tmp, where);
  const fs::path run = tmp.path / "run";
  // --memory-size is babi's setting (memories per question) and a size memn2n takes from it.
  REQUIRE(cmd_train({"--task",          "babi",
                     "--model",         "memn2n",
                     "--data",          (tmp.path / "a").string(),
                     "--memory-size",   "2",
                     "--embedding-dim", "4",
                     "--batch",         "3",
                     "--iterations",    "2",
                     "--log-every",     "1",
                     "--threads",       "1",
                     "--quiet",         "--out",
                     run.string()}) == 0);
  REQUIRE(cmd_train({"--resume", run.string(), "--iterations", "3", "--data",
                     (tmp.path / "b").string(), "--quiet"}) == 0);
  std::ifstream c(run / "config.json");
  const nlohmann::json config = parse_json(c);
  CHECK(config["task_settings"]["data_dir"] == (tmp.path / "b").string());
  CHECK(config["task_settings"]["memory_size"] == 2);
  CHECK(logged_losses(run).size() == 3);

  const fs::path sum = tmp.path / "sum";
  REQUIRE(cmd_train(tiny_run(sum, 1)) == 0);
  CHECK_THROWS_WITH(cmd_train({"--resume", sum.string(), "--data", "x"}),
                    doctest::Contains("task sum2seq of the run reads no data folder"));
}

TEST_CASE("second QA pass: flags, run directories and non-finite values") {
  TempDir tmp;
  auto with = [&](const fs::path& out, int iterations, const Words& extra) {
    return with_words(tiny_run(out, iterations), extra);
  };
  const fs::path never = tmp.path / "never";
  CHECK_THROWS_WITH_AS(cmd_train(with(never, 1, {"stray"})),
                       doctest::Contains("unexpected argument 'stray'"), UsageError);
  CHECK_THROWS_WITH_AS(cmd_train(with(never, 1, {"--data", "/nonexistent"})),
                       doctest::Contains("--data: task sum2seq reads no data folder"), UsageError);
  CHECK_THROWS_WITH_AS(cmd_train(with(never, 1, {"--log-every", "-1"})),
                       doctest::Contains("--log-every must be >= 0"), UsageError);
  CHECK_THROWS_WITH_AS(cmd_train(with(never, 1, {"--test-seed", "-1"})),
                       doctest::Contains("test_seed must be a whole number >= 0"), Error);
  Words no_out = with(never, 1, {});
  no_out[size_t(std::find(no_out.begin(), no_out.end(), "--out") - no_out.begin()) + 1] = "";
  CHECK_THROWS_WITH_AS(cmd_train(no_out), doctest::Contains("--out needs a directory"), UsageError);
  // clip_value is a real number (its default was the whole number 10).
  REQUIRE(cmd_train(with(tmp.path / "clip", 1, {"--clip-value", "0.5"})) == 0);

  // A start that failed before saving anything does not block the next run in its folder.
  const fs::path failed = tmp.path / "failed";
  CHECK_THROWS(cmd_train(with(failed, 1, {"--input-vocab2", "5"})));
  CHECK(fs::exists(failed / "config.json"));
  CHECK(cmd_train(with(failed, 1, {})) == 0);

  // An update that overflows: the loss of the step was finite, the parameters are not; no
  // checkpoint of them is written.
  const fs::path huge = tmp.path / "huge";
  CHECK_THROWS_WITH_AS(cmd_train(with(huge, 1, {"--lr", "1e38"})),
                       doctest::Contains("training diverged"), Error);
  CHECK_FALSE(fs::exists(huge / "checkpoint.safetensors"));

  // Run directories with bad contents.
  const fs::path run = tmp.path / "run";
  REQUIRE(cmd_train(tiny_run(run, 2)) == 0);
  const std::string config = (run / "config.json").string();
  std::ifstream in(config);
  const nlohmann::json good = parse_json(in);
  auto write_config = [&](const nlohmann::json& j) { std::ofstream(config) << dump_json(j); };
  nlohmann::json bad = good;
  bad["train"]["optimizer"] = 3;
  write_config(bad);
  CHECK_THROWS_WITH_AS(cmd_eval({"--checkpoint", run.string()}),
                       doctest::Contains("config.json: train setting 'optimizer' is 3"), Error);
  bad = good;
  bad["seed"] = -1;
  write_config(bad);
  CHECK_THROWS_WITH_AS(cmd_eval({"--checkpoint", run.string()}),
                       doctest::Contains("config.json: seed must be a whole number >= 0"), Error);
  write_config(good);
  const std::string checkpoint = (run / "checkpoint.safetensors").string();
  TensorFile file = load_safetensors(checkpoint);
  for (auto& [name, t] : file.tensors)
    if (name.rfind("optim/", 0) == 0) {
      t.set(0, std::numeric_limits<double>::infinity());
      break;
    }
  save_safetensors(checkpoint, file);
  CHECK_THROWS_WITH_AS(cmd_train({"--resume", run.string(), "--iterations", "3", "--quiet"}),
                       doctest::Contains("optimizer state 'optim/"), Error);
  CHECK_THROWS_WITH_AS(cmd_eval({"--checkpoint", run.string(), "--data", "x"}),
                       doctest::Contains("--data: task sum2seq of the run reads no data folder"),
                       Error);
  fs::remove(config);
  fs::create_directory(config);
  CHECK_THROWS_WITH_AS(cmd_eval({"--checkpoint", run.string()}),
                       doctest::Contains("config.json: is a directory, not a file"), Error);
}
