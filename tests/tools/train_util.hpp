// Helpers of the `memgrad train` tests: a tiny sum2seq run's words, its logged losses.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/commands.hpp"

namespace memgrad::test {

using cli::Words;

inline std::vector<double> logged_losses(const std::filesystem::path& dir) {
  std::ifstream in(dir / "log.jsonl");
  std::vector<double> losses;
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    if (j.contains("loss")) losses.push_back(j["loss"].get<double>());
  }
  return losses;
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

}  // namespace memgrad::test
