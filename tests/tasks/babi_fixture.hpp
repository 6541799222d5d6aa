// Hand-made bAbI data for tests: three stories of task-1 style and a writer of one task's files
// in a data folder laid out as the distribution's (tasks_1-20_v1-2/<set>/qaN_*_{train,test}.txt).
#pragma once
#include <string>

#include "tasks/babi.hpp"
#include "tests/test_util.hpp"

namespace memgrad::test::babi_fixture {

inline const char* kStories =
    "1 Mary moved to the bathroom.\n"
    "2 John went to the hallway.\n"
    "3 Where is Mary? \tbathroom\t1\n"
    "4 Daniel went back to the hallway.\n"
    "5 Where is Daniel?\thallway\t4\n"
    "1 Sandra journeyed to the Office.\n"
    "2 Where is Sandra?\toffice\t1\n";

// The path of task `task`'s `split` ("train" or "test") file of `set` in a data folder.
inline std::string task_path(int task, const std::string& split, const std::string& set) {
  return std::string(babi::kDataFolder) + "/" + set + "/qa" + std::to_string(task) + "_test-task_" +
         split + ".txt";
}

// Writes task `task`'s training and test files (an empty `train` is written empty); returns the
// data folder.
inline std::string write_task(const TempDir& dir, int task, const std::string& train,
                              const std::string& test, const std::string& set = "en") {
  dir.write(task_path(task, "train", set), train);
  dir.write(task_path(task, "test", set), test);
  return dir.path.string();
}

// Writes only task `task`'s test file: a set without that training file, as qa3 in en-10k.
inline std::string write_test_only(const TempDir& dir, int task, const std::string& test,
                                   const std::string& set) {
  dir.write(task_path(task, "test", set), test);
  return dir.path.string();
}

}  // namespace memgrad::test::babi_fixture
