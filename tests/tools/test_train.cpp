// memgrad train / eval end to end on a tiny sum2seq run: the run directory, exact resume, eval.
#include <doctest/doctest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "tests/test_util.hpp"
#include "tools/args.hpp"
#include "tools/commands.hpp"

using namespace memgrad::cli;
using memgrad::test::TempDir;
namespace fs = std::filesystem;

namespace {

std::vector<double> logged_losses(const fs::path& dir) {
  std::ifstream in(dir / "log.jsonl");
  std::vector<double> losses;
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    if (j.contains("loss")) losses.push_back(j["loss"].get<double>());
  }
  return losses;
}

Words tiny_run(const fs::path& out, int iterations) {
  return {"--task",
          "sum2seq",
          "--model",
          "dual-lstm",
          "--embedding",
          "4",
          "--hidden",
          "6",
          "--batch",
          "4",
          "--iterations",
          std::to_string(iterations),
          "--log-every",
          "1",
          "--checkpoint-every",
          "2",
          "--test-samples",
          "12",
          "--test-lmax",
          "3,5",
          "--lmax",
          "4",
          "--seed",
          "5",
          "--threads",
          "1",
          "--quiet",
          "--out",
          out.string()};
}

}  // namespace

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
  const auto metrics = nlohmann::json::parse(m);
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
  CHECK(nlohmann::json::parse(e)["accuracy"] == metrics["accuracy"]);
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
  const nlohmann::json j = nlohmann::json::parse(in);
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
    auto j = nlohmann::json::parse(line);
    if (j.contains("lr")) lr.push_back(j["lr"].get<double>());
  }
  REQUIRE(lr.size() == 8);
  for (int s = 0; s < 8; ++s) {
    const double want = s < 4 ? 0.01 : 0.01 * (1.0 - 0.5 * double(s - 4) / 4.0);
    CHECK(lr[size_t(s)] == doctest::Approx(want).epsilon(1e-12));
  }
}
