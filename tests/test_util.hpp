// Helpers shared by the test suites: value comparison with a dtype's tolerance, a temporary
// folder, running the registered gradient-check cases of a list of ops, finding ../shared, and
// reading a file and searching text. Test files are compiled in unity batches
// (tests/CMakeLists.txt): a helper two files need belongs here, not in both.
#pragma once
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "engine/error.hpp"
#include "engine/gradcheck.hpp"
#include "engine/tensor.hpp"

namespace memgrad::test {

inline constexpr DType kBoth[] = {DType::f32, DType::f64};

// Relative tolerance for a value computed in dtype d (rounding only, no approximation).
inline double tol_of(DType d) { return d == DType::f32 ? 1e-6 : 1e-12; }

// Every element of t against want, relative tolerance tol (0: exactly equal).
inline void check_values(const Tensor& t, const std::vector<double>& want, double tol) {
  const std::vector<double> got = t.to_vector();
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element ", i);
    if (tol == 0)
      CHECK(got[i] == want[i]);
    else
      CHECK(got[i] == doctest::Approx(want[i]).epsilon(tol));
  }
}

// A fresh temporary folder, removed with everything in it at the end of the test.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    path = std::filesystem::temp_directory_path() /
           ("memgrad-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  // Writes `text` to path/rel (creating folders) and returns the file's path.
  std::string write(const std::string& rel, const std::string& text) const {
    const std::filesystem::path p = path / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
};

// Test cases that read ../shared (golden vectors, real data sets) belong to this doctest test
// suite: `* doctest::test_suite(test::kSharedData)`. ctest runs them as entries of their own
// (tests/CMakeLists.txt), reported as skipped when the data is absent, never as passed.
inline constexpr const char* kSharedData = "shared_data";

// ../shared/<rel> beside the source tree; the environment variable MEMGRAD_SHARED_DIR, when set,
// replaces ../shared (to see the suite skip: MEMGRAD_SHARED_DIR=/nonexistent ctest ...).
inline std::string shared_path(const std::string& rel) {
  const char* dir = std::getenv("MEMGRAD_SHARED_DIR");
  const std::string root =
      dir && *dir ? std::string(dir) : std::string(MEMGRAD_SOURCE_DIR) + "/../shared";
  return root + "/" + rel;
}

// How many test cases returned early for want of data: tests/doctest_main.cpp then exits with 77.
inline int& skipped_for_data() {
  static int count = 0;
  return count;
}

// Whether the folder `path` is there. When it is not, records the skip and says so; the test must
// then return at once (it has checked nothing).
inline bool shared_data_present(const std::string& path) {
  if (std::filesystem::is_directory(path)) return true;
  ++skipped_for_data();
  MESSAGE("SKIPPED: " << path << " not found; nothing checked");
  return false;
}

// A whole file's bytes ("" when it cannot be opened).
inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Whether text contains part, and how often (overlapping occurrences counted).
inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}
inline size_t count_of(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The message of the memgrad::Error that f throws, or "(no error)".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Runs every registered gradient-check case of the given ops; each must pass, and each op must
// have at least min_cases cases.
inline void check_registered_cases(const std::vector<std::string>& ops, int min_cases) {
  for (const std::string& op : ops) {
    int cases = 0;
    for (const GradCase& c : all_grad_cases()) {
      if (c.op != op) continue;
      ++cases;
      const GradCheckResult r = run_grad_case(c);
      INFO(c.name, ": max rel err ", r.max_rel_err, " ", r.message);
      CHECK(r.passed);
    }
    INFO(op);
    CHECK(cases >= min_cases);
  }
}

}  // namespace memgrad::test
