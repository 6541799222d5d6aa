// A tiny bAbI task-1 look-alike with several questions per story, for the tests of the
// memory-story view and EntNet's per-story mode: story s has 1 + (5 s + salt) % longest
// statements, a question after every third statement and one at the end, so stories differ in
// length and in their number of questions.
#pragma once
#include <string>

#include "tasks/babi.hpp"
#include "tests/test_util.hpp"

namespace memgrad::test {

inline std::string babi_stories(int count, int salt, int longest) {
  const char* people[] = {"mary", "john", "sandra", "daniel"};
  const char* places[] = {"kitchen", "garden", "office", "hallway", "bathroom"};
  std::string text;
  for (int s = 0; s < count; ++s) {
    const int n = 1 + (s * 5 + salt) % longest;
    int id = 0;
    for (int i = 0; i < n; ++i) {
      text += std::to_string(++id) + " " + people[(s + i) % 4] + " went to the " +
              places[(s * 3 + i) % 5] + ".\n";
      if ((i + 1) % 3 == 0 || i == n - 1) {
        const int fact = id++;  // the statement just written
        text += std::to_string(id) + " Where is " + people[(s + i) % 4] + "?\t" +
                places[(s * 3 + i) % 5] + "\t" + std::to_string(fact) + "\n";
      }
    }
  }
  return text;
}

// Writes the train (`train` stories) and test (`test` stories) files of task 1 under dir and
// returns the data folder.
inline std::string write_babi_stories(const TempDir& dir, int train, int test, int longest) {
  const std::string base = std::string(babi::kDataFolder) + "/en/qa1_stories_";
  dir.write(base + "train.txt", babi_stories(train, 0, longest));
  dir.write(base + "test.txt", babi_stories(test, 5, longest));
  return dir.path.string();
}

}  // namespace memgrad::test
