// DMN+ trained through the trainer on a tiny bAbI task written to a temporary folder: it fits 50
// training questions exactly, the same seed gives the same losses, no step after the first
// allocates, and `memgrad inspect` shows the attention per pass.
#include <doctest/doctest.h>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/alloc_counter.hpp"
#include "engine/json_text.hpp"
#include "engine/threads.hpp"
#include "tasks/babi.hpp"
#include "tests/test_util.hpp"
#include "tools/commands.hpp"
#include "tools/trainer.hpp"

using namespace memgrad;

namespace {

// A bAbI task 1 folder: 56 training questions (50 train, 6 validation), stories of 1 to 6
// statements, so that batches differ in their number of facts; the answer is where the person of
// the question went last.
std::string write_tiny_babi(const test::TempDir& dir) {
  const char* people[] = {"mary", "john", "sandra", "daniel"};
  const char* places[] = {"kitchen", "garden", "office", "hallway", "bathroom"};
  auto stories = [&](int count, int salt) {
    std::string text;
    for (int s = 0; s < count; ++s) {
      const int n = 1 + (s * 5 + salt) % 6;
      for (int i = 0; i < n; ++i)
        text += std::to_string(i + 1) + " " + people[(s + i) % 4] + " went to the " +
                places[(s * 3 + i * 2 + salt) % 5] + ".\n";
      const int asked = (s * 7) % n;  // a person of the story; the answer: their last place
      int last = asked;
      for (int i = asked; i < n; ++i)
        if ((s + i) % 4 == (s + asked) % 4) last = i;
      text += std::to_string(n + 1) + " Where is " + people[(s + asked) % 4] + "?\t" +
              places[(s * 3 + last * 2 + salt) % 5] + "\t" + std::to_string(last + 1) + "\n";
    }
    return text;
  };
  const std::string base = std::string(babi::kDataFolder) + "/en/qa1_tiny_";
  dir.write(base + "train.txt", stories(56, 0));
  dir.write(base + "test.txt", stories(20, 3));
  return dir.path.string();
}

std::vector<std::string> flags(const std::string& data, const char* iterations, const char* seed,
                               const char* dropout) {
  return {"--task",  "babi", "--model",      "dmn-plus", "--data",   data, "--babi-task",     "1",
          "--batch", "10",   "--iterations", iterations, "--hidden", "16", "--embedding-dim", "16",
          "--seed",  seed,   "--dropout",    dropout};
}

}  // namespace

TEST_CASE("dmn-plus fits 50 training questions exactly (0% training error)") {
  ThreadScope threads(1);
  test::TempDir dir;
  const std::string data = write_tiny_babi(dir);
  cli::Trainer trainer(
      cli::parse_run_flags(flags(data, "400", "1", "0"), nullptr, nullptr, nullptr));
  const nlohmann::json before = trainer.evaluate();
  for (int64_t step = 0; step < trainer.total_steps(); ++step) trainer.train_step(step);
  const nlohmann::json after = trainer.evaluate();
  INFO(dump_json(after));
  CHECK(before["train_mean_error"].get<double>() > 30.0);
  CHECK(after["train_mean_error"].get<double>() == 0.0);
}

TEST_CASE("dmn-plus: the same seed gives the same losses, another seed others") {
  ThreadScope threads(1);
  test::TempDir dir;
  const std::string data = write_tiny_babi(dir);
  auto losses = [&](const char* seed) {
    cli::Trainer trainer(
        cli::parse_run_flags(flags(data, "6", seed, "0.1"), nullptr, nullptr, nullptr));
    std::vector<double> out;
    for (int64_t step = 0; step < 6; ++step) out.push_back(trainer.train_step(step).loss);
    return out;
  };
  const std::vector<double> a = losses("1"), b = losses("1"), c = losses("2");
  CHECK(a == b);
  CHECK(a != c);
}

TEST_CASE("no heap allocation after the first dmn-plus training step, story lengths varying") {
  test::TempDir dir;
  const std::string data = write_tiny_babi(dir);
  cli::Trainer trainer(
      cli::parse_run_flags(flags(data, "100", "1", "0.1"), nullptr, nullptr, nullptr));
  trainer.train_step(0);
  int64_t allocating = 0;
  for (int64_t step = 1; step < 60; ++step) {
    const uint64_t before = heap_allocations();
    trainer.train_step(step);
    if (heap_allocations() != before) ++allocating;
  }
  CHECK(allocating == 0);
}

TEST_CASE("memgrad inspect shows dmn-plus's attention per pass over the facts") {
  test::TempDir dir;
  const std::string data = write_tiny_babi(dir);
  std::ostringstream out;
  auto* old = std::cout.rdbuf(out.rdbuf());
  const int rc =
      cli::cmd_inspect({"--model", "dmn-plus", "--task", "babi", "--data", data, "--babi-task", "1",
                        "--hidden", "8", "--embedding-dim", "8", "--sample", "1", "--json"});
  std::cout.rdbuf(old);
  REQUIRE(rc == 0);
  const nlohmann::json j = parse_json(out.str());
  bool found = false;
  for (const nlohmann::json& s : j["series"]) {
    if (s["name"] != "episode/attention") continue;
    found = true;
    CHECK(s["steps"] == nlohmann::json::array({1, 2, 3}));  // one row per pass
    for (const nlohmann::json& row : s["values"]) {
      double total = 0;
      for (const nlohmann::json& v : row) total += v.get<double>();
      CHECK(total == doctest::Approx(1.0).epsilon(1e-5));
    }
  }
  CHECK(found);
}
