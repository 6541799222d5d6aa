// The doctest main of every test executable. Two exit codes beyond doctest's own, so that ctest
// can never count a run that checked nothing as passed:
// - 77 (ctest's SKIP_RETURN_CODE, tests/CMakeLists.txt) when nothing failed but a test returned
//   early because the ../shared data it reads is absent (test::shared_data_present);
// - 1 when the filters selected no test case at all (a misspelt suite or name).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "tests/test_util.hpp"

namespace {

int g_runs = 0;        // test runs started (0 for --help, --list-test-cases, --count, ...)
int g_test_cases = 0;  // test cases started

// Counts what ran; reports nothing itself.
struct RunCounter : doctest::IReporter {
  explicit RunCounter(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override { ++g_runs; }
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData&) override { ++g_test_cases; }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
REGISTER_LISTENER("run_counter", 1, RunCounter);

}  // namespace

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int result = context.run();
  if (context.shouldExit() || result != 0 || g_runs == 0) return result;
  if (g_test_cases == 0) {
    std::fprintf(stderr, "no test case matched the filters: nothing was checked\n");
    return 1;
  }
  if (const int skipped = memgrad::test::skipped_for_data(); skipped > 0) {
    std::printf("SKIPPED: %d test case(s) found no ../shared data to check\n", skipped);
    return 77;
  }
  return 0;
}
