// Helpers of the `memgrad train` tests: a tiny sum2seq run's words, its logged losses, the built
// program started as a separate process.
#pragma once
#include <doctest/doctest.h>
#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/json_text.hpp"
#include "tests/test_util.hpp"
#include "tools/commands.hpp"

namespace memgrad::test {

using cli::Words;

// A JSON file written by a run (config.json, metrics.json, best.json), parsed.
inline nlohmann::json read_json(const std::filesystem::path& p) {
  std::ifstream in(p);
  return parse_json(in);
}

inline std::vector<double> logged_losses(const std::filesystem::path& dir) {
  std::ifstream in(dir / "log.jsonl");
  std::vector<double> losses;
  std::string line;
  while (std::getline(in, line)) {
    auto j = parse_json(line);
    if (j.contains("loss")) losses.push_back(j["loss"].get<double>());
  }
  return losses;
}

// The lines of a run's log.jsonl, parsed, without "steps_per_s": the one field that is wall time,
// which no two runs share.
inline std::vector<nlohmann::json> log_without_wall_time(const std::filesystem::path& dir) {
  std::ifstream in(dir / "log.jsonl");
  std::vector<nlohmann::json> lines;
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json j = parse_json(line);
    j.erase("steps_per_s");
    lines.push_back(std::move(j));
  }
  return lines;
}

inline Words tiny_run(const std::filesystem::path& out, int iterations) {
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

// The words of a small physionet2012 run with model selection (logreg) on the hand-made data of
// tests/tasks/physionet_fixture.hpp, without its length (--epochs or --iterations).
inline Words physionet_run(const std::string& data_dir, const std::filesystem::path& out) {
  return {"--task",
          "physionet2012",
          "--model",
          "logreg",
          "--data",
          data_dir,
          "--valid-fraction",
          "0.2",
          "--test-fraction",
          "0.2",
          "--batch",
          "4",
          "--lr",
          "0.01",
          "--bootstrap-resamples",
          "20",
          "--out",
          out.string(),
          "--quiet",
          "--threads",
          "1"};
}

// Writes a tiny bAbI task 1 (ten copies of one story, as training and test file) into
// tmp/folder, laid out as the data set is distributed; returns the folder.
inline std::filesystem::path write_babi_qa1(const TempDir& tmp, const std::string& folder) {
  std::string stories;
  for (int i = 0; i < 10; ++i)
    stories +=
        "1 Mary moved to the bathroom.\n2 John went to the hallway.\n"
        "3 Where is Mary?\tbathroom\t1\n";
  const std::string base = folder + "/tasks_1-20_v1-2/en/qa1_single-supporting-fact_";
  tmp.write(base + "train.txt", stories);
  tmp.write(base + "test.txt", stories);
  return tmp.path / folder;
}

// Words with `extra` over them: an option words already has takes extra's value (an option may
// be given once), any other word is appended.
inline Words with_words(Words words, const Words& extra) {
  for (size_t i = 0; i < extra.size(); ++i) {
    const bool valued =
        extra[i].rfind("--", 0) == 0 && i + 1 < extra.size() && extra[i + 1].rfind("--", 0) != 0;
    auto at = std::find(words.begin(), words.end(), extra[i]);
    if (valued && at != words.end() && at + 1 != words.end()) {
      *(at + 1) = extra[++i];
      continue;
    }
    words.push_back(extra[i]);
    if (valued) words.push_back(extra[++i]);
  }
  return words;
}

// Starts `memgrad train words...` (the built program) with its stderr in err; returns its pid.
inline pid_t spawn_train(const Words& words, const std::filesystem::path& err) {
  std::vector<std::string> argv_words = {MEMGRAD_BINARY, "train"};
  argv_words.insert(argv_words.end(), words.begin(), words.end());
  std::vector<char*> argv;
  for (std::string& w : argv_words) argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT, 0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, MEMGRAD_BINARY, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE(rc == 0);
  return pid;
}

inline size_t line_count(const std::filesystem::path& file) {
  std::ifstream in(file);
  return size_t(
      std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n'));
}

}  // namespace memgrad::test
