// gradcheck_all (models/registry_check.hpp), the registry's checks for programs built on memgrad:
// it runs the selected ops' cases and models' variants, refuses a name nothing registered, and
// fails whatever the selection when an op in the program has no case.
#include <doctest/doctest.h>

#include <algorithm>

#include "models/registry_check.hpp"
#include "tests/test_util.hpp"

using namespace memgrad;

TEST_CASE(
    "gradcheck_all runs the cases of the selected ops and the variants of the selected models") {
  size_t cases = 0;
  for (const GradCase& c : all_grad_cases())
    cases += c.op == "softmax" || c.op == "cumprod_exclusive";
  const GradcheckReport r =
      gradcheck_all({.ops = {"softmax", "cumprod_exclusive"}, .models = {"logreg"}});
  INFO(r.summary());
  CHECK(r.passed());
  CHECK(cases >= 2);
  CHECK(r.results.size() == cases + 2);  // logreg's variants: l2 and no-penalty
  CHECK(std::count_if(r.results.begin(), r.results.end(), [](const GradCheckResult& x) {
          return x.name.rfind("logreg/", 0) == 0;
        }) == 2);
  CHECK(r.summary().find(std::to_string(cases + 2) + " passed, 0 failed") != std::string::npos);
}

TEST_CASE("gradcheck_all refuses a name that nothing registered") {
  CHECK(test::error_of([] {
          gradcheck_all({.ops = {"no_such_op"}, .models = {}});
        }).find("no registered op named 'no_such_op'") != std::string::npos);
  CHECK(test::error_of([] {
          gradcheck_all({.ops = {}, .models = {"no-such-model"}});
        }).find("no registered model named 'no-such-model'") != std::string::npos);
}

// Last in this file: the op it registers stays registered for the rest of the binary.
TEST_CASE("gradcheck_all fails on an op without a case, whatever is selected") {
  CHECK(gradcheck_all({.ops = {}, .models = {}}).passed());
  static const OpDef kUnchecked{"test_registry_check_unchecked"};
  const GradcheckReport r = gradcheck_all({.ops = {}, .models = {}});
  CHECK_FALSE(r.passed());
  CHECK(r.results.empty());
  CHECK(r.ops_without_case == std::vector<std::string>{"test_registry_check_unchecked"});
  CHECK(r.summary().find("op 'test_registry_check_unchecked' has no gradient-check case") !=
        std::string::npos);
}
