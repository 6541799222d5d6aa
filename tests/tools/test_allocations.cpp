// No training step after the first allocates on the heap, for every model, with batches whose
// shapes vary from step to step. The first step is the warm-up: before it the trainer runs the
// task's largest batch forward and backward (Trainer::reserve_memory), which sizes every tape's
// arena, node slots and batch buffers. Small dimensions keep the suite fast; the code paths are
// those of paper dimensions. Before the tape's arena, dmnc-late at batch 50 allocated on 43 of
// steps 5-299 (up to 2,029 allocations in one step): nodes move between slots when lengths vary.
#include <doctest/doctest.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/alloc_counter.hpp"
#include "engine/json_text.hpp"
#include "engine/threads.hpp"
#include "tasks/babi.hpp"
#include "tests/tasks/babi_story_fixture.hpp"
#include "tests/tasks/mimic_fixture.hpp"
#include "tests/test_util.hpp"
#include "tools/commands.hpp"
#include "tools/trainer.hpp"

using namespace memgrad;

namespace {
constexpr int64_t kSteps = 200;  // after the warm-up step

// Runs step 0 (warm-up), then kSteps steps, each of which must allocate nothing. Returns the
// number of distinct batch shapes the measured steps saw (field `field`'s shape).
size_t check_steps_allocate_nothing(const std::vector<std::string>& flags, const char* field) {
  const cli::RunConfig rc = cli::parse_run_flags(flags, nullptr, nullptr, nullptr);
  cli::Trainer trainer(rc);
  trainer.train_step(0);
  std::set<std::string> shapes;
  int64_t allocating = 0;
  for (int64_t step = 1; step <= kSteps; ++step) {
    const uint64_t before = heap_allocations();
    trainer.train_step(step);
    const uint64_t allocations = heap_allocations() - before;
    if (allocations != 0) {
      ++allocating;
      CAPTURE(step);
      CHECK(allocations == 0);
    }
    // After the step's count: recording the shape allocates.
    Batch batch;
    trainer.task().train_batch(step, trainer.batch_size(), DType::f32, batch);
    shapes.insert(batch.get(field).shape().str());
  }
  CHECK(allocating == 0);
  return shapes.size();
}

std::vector<std::string> sum2seq_flags(const std::string& model, int shards) {
  return {"--task",       "sum2seq", "--model",  model,
          "--lmax",       "6",       "--batch",  "6",
          "--embedding",  "8",       "--hidden", "8",
          "--iterations", "1000",    "--shards", std::to_string(shards)};
}

// A bAbI task 1 folder whose stories have 1 to 9 statements, so that batches differ in their
// number of memories.
std::string write_babi(const test::TempDir& dir) {
  const char* people[] = {"mary", "john", "sandra", "daniel"};
  const char* places[] = {"kitchen", "garden", "office", "hallway", "bathroom"};
  auto stories = [&](int count, int salt) {
    std::string text;
    for (int s = 0; s < count; ++s) {
      const int n = 1 + (s * 7 + salt) % 9;
      for (int i = 0; i < n; ++i)
        text += std::to_string(i + 1) + " " + people[(s + i) % 4] + " went to the " +
                places[(s * 3 + i) % 5] + ".\n";
      const int last = n - 1;
      text += std::to_string(n + 1) + " Where is " + people[(s + last) % 4] + "?\t" +
              places[(s * 3 + last) % 5] + "\t" + std::to_string(n) + "\n";
    }
    return text;
  };
  const std::string base = std::string(babi::kDataFolder) + "/en/qa1_test-task_";
  dir.write(base + "train.txt", stories(120, 0));
  dir.write(base + "test.txt", stories(20, 5));
  return dir.path.string();
}
}  // namespace

TEST_CASE("no heap allocation after the first sum2seq training step, lengths varying") {
  for (const std::string model : {"dmnc-late", "dmnc-early", "dnc", "lstm", "dual-lstm", "wlas"}) {
    CAPTURE(model);
    CHECK(check_steps_allocate_nothing(sum2seq_flags(model, 1), "x1") > 1);
  }
}

TEST_CASE("no heap allocation after the first step of batch shards run on two threads") {
  ThreadScope threads(2);
  for (const std::string model : {"dmnc-late", "dmnc-early", "dnc", "lstm", "dual-lstm", "wlas"}) {
    CAPTURE(model);
    CHECK(check_steps_allocate_nothing(sum2seq_flags(model, 2), "x1") > 1);
  }
}

TEST_CASE("no heap allocation after the first memn2n training step, story lengths varying") {
  test::TempDir dir;
  const std::string data = write_babi(dir);
  CHECK(check_steps_allocate_nothing({"--task", "babi", "--model", "memn2n", "--data", data,
                                      "--babi-task", "1", "--batch", "8", "--iterations", "1000"},
                                     "story") > 1);
}

TEST_CASE("no heap allocation after the first entnet training step, story lengths varying") {
  test::TempDir dir;
  const std::string data = write_babi(dir);
  CHECK(check_steps_allocate_nothing(
            {"--task", "babi", "--model", "entnet", "--data", data, "--babi-task", "1", "--batch",
             "8", "--embedding-dim", "8", "--memory-slots", "4", "--iterations", "1000"},
            "story") > 1);
}

TEST_CASE(
    "no heap allocation after the first per-story entnet step, stories and questions varying") {
  test::TempDir dir;
  const std::string data = test::write_babi_stories(dir, 120, 20, 14);
  for (const std::string field : {"story", "questions"}) {
    CAPTURE(field);
    CHECK(check_steps_allocate_nothing(
              {"--task", "babi", "--model", "entnet", "--data", data, "--babi-task", "1",
               "--babi-view", "memory-story", "--batch", "16", "--embedding-dim", "8",
               "--memory-slots", "4", "--iterations", "1000"},
              field.c_str()) > 1);
  }
}

TEST_CASE("no heap allocation after the first amn training step, story lengths varying") {
  test::TempDir dir;
  const std::string data = write_babi(dir);
  CHECK(check_steps_allocate_nothing(
            {"--task", "babi", "--model", "amn", "--data", data, "--babi-task", "1", "--batch", "8",
             "--embedding-dim", "8", "--max-banks", "3", "--iterations", "1000"},
            "story") > 1);
}

TEST_CASE("no heap allocation after the first encdec training step, sequence lengths varying") {
  test::TempDir dir;
  const std::string data = write_babi(dir);
  CHECK(check_steps_allocate_nothing(
            {"--task", "babi", "--model", "encdec", "--data", data, "--babi-task", "1", "--batch",
             "8", "--embedding", "8", "--hidden", "8", "--iterations", "1000"},
            "words") > 1);
}

TEST_CASE(
    "bench --json gives allocations as the largest count, the mean and the steps allocating") {
  auto bench = [](const char* warmup) {
    std::ostringstream out;
    auto* old = std::cout.rdbuf(out.rdbuf());
    const int rc = cli::cmd_bench({"--model", "lstm", "--task", "sum2seq", "--embedding", "4",
                                   "--hidden", "6", "--batch", "5", "--lmax", "4", "--steps", "30",
                                   "--warmup", warmup, "--threads", "1", "--json"});
    std::cout.rdbuf(old);
    REQUIRE(rc == 0);
    return parse_json(out.str());
  };
  const nlohmann::json after = bench("1"), all = bench("0");
  CHECK(after["warmup_steps"] == 1);
  const nlohmann::json& a = after["allocs_per_step"];
  CHECK(a["steps"] == 30);
  CHECK(a["max"] == 0);
  CHECK(a["mean"] == 0.0);
  CHECK(a["steps_allocating"] == 0);
  CHECK(a["last_allocating_step"] == -1);
  // Without warm-up the first step (which sizes the memory) is counted, and shows.
  const nlohmann::json& b = all["allocs_per_step"];
  CHECK(b["steps_allocating"].get<int64_t>() >= 1);
  CHECK(b["max"].get<uint64_t>() > 0);
  CHECK(b["mean"].get<double>() == doctest::Approx(b["total"].get<double>() / 30));
}

TEST_CASE("no heap allocation after the first mimic-drugs step: set output, view lengths varying") {
  test::TempDir dir;
  namespace fx = test::mimic_fixture;
  fx::Tables t = fx::make_tables(40);
  // Patient p's first admission gets p % 4 more diagnoses: batches differ in their longest view.
  for (int p = 0; p < 40; ++p)
    for (int k = 0; k < p % 4; ++k) {
      // ROW_ID, SUBJECT_ID, HADM_ID, SEQ_NUM, ICD9_CODE (appended piece by piece: g++ 12 warns
      // falsely, -Wrestrict, on "literal" + std::string)
      for (int v : {9000 + 10 * p + k, 100 + p, 1000 + 10 * p, 4 + k}) {
        t.diagnoses += std::to_string(v);
        t.diagnoses += ',';
      }
      t.diagnoses += "\"49";
      t.diagnoses += std::to_string(k);
      t.diagnoses += "\"\n";
    }
  fx::write_tables(dir.path, t);
  for (const std::string row : {"dmnc-late", "dmnc-late step", "dmnc-early", "wlas",
                                "binary-relevance", "classifier-chains"}) {
    CAPTURE(row);
    const std::string model = row.substr(0, row.find(' '));
    std::vector<std::string> flags = {
        "--task",  "mimic-drugs", "--model",      model,  "--data",   dir.path.string(),
        "--batch", "5",           "--iterations", "1000", "--epochs", "0"};
    if (model != "binary-relevance" && model != "classifier-chains")
      for (const char* f : {"--embedding", "8", "--hidden", "8"}) flags.push_back(f);
    if (row.ends_with(" step")) flags.insert(flags.end(), {"--set-decoder", "step"});
    CHECK(check_steps_allocate_nothing(flags, "x1") > 1);
  }
}

TEST_CASE(
    "no heap allocation after the first mimic-drugs step with patient rows: memory carried "
    "across a patient's admissions, unrolled on one tape") {
  test::TempDir dir;
  namespace fx = test::mimic_fixture;
  fx::write_tables(dir.path, fx::make_progression_tables(48));
  for (const std::string model : {"dmnc-late", "deepcare"}) {
    CAPTURE(model);
    std::vector<std::string> flags = {
        "--task",         "mimic-drugs", "--model",  model, "--data",       dir.path.string(),
        "--patient-rows", "true",        "--batch",  "4",   "--iterations", "1000",
        "--epochs",       "0",           "--unroll", "2"};
    if (model == "dmnc-late")
      flags.insert(flags.end(),
                   {"--embedding", "8", "--hidden", "8", "--persistent-memory", "true"});
    CHECK(check_steps_allocate_nothing(flags, "x1") >= 1);
  }
}

TEST_CASE(
    "no heap allocation after the first mimic-progression step: memory carried across "
    "lock-step admissions (as values, or unrolled on one tape), rows masked, groups of patients "
    "restarting") {
  test::TempDir dir;
  namespace fx = test::mimic_fixture;
  fx::write_tables(dir.path, fx::make_progression_tables(48));
  for (const std::string model : {"dmnc-late", "dmnc-early", "deepcare"})
    for (const std::string persistent : {"true", "false", "unrolled"}) {
      CAPTURE(model);
      CAPTURE(persistent);
      // "unrolled": carried, and three admissions per tape (--unroll 3, models/unroll.hpp).
      std::vector<std::string> flags = {"--task",       "mimic-progression",
                                        "--model",      model,
                                        "--data",       dir.path.string(),
                                        "--batch",      "4",
                                        "--iterations", "1000",
                                        "--epochs",     "0"};
      const std::string carried = persistent == "false" ? "false" : "true";
      if (model == "deepcare")
        flags.insert(flags.end(), {"--carry-state", carried});
      else
        flags.insert(flags.end(),
                     {"--embedding", "8", "--hidden", "8", "--persistent-memory", carried});
      if (persistent == "unrolled") flags.insert(flags.end(), {"--unroll", "3"});
      CHECK(check_steps_allocate_nothing(flags, "x1") >= 1);
    }
}
