// The gradient-check registry: every op that can appear on a tape has a case, and every case
// passes. This is the regression suite behind `memgrad gradcheck --op all`.
#include <doctest/doctest.h>

#include <set>

#include "engine/gradcheck.hpp"

using namespace memgrad;

TEST_CASE("every registered op has a gradient-check case") {
  const std::vector<std::string> missing = ops_without_grad_case();
  std::string list;
  for (const std::string& m : missing) list += " " + m;
  INFO("ops without a case:", list);
  CHECK(missing.empty());
  CHECK(all_ops().size() >= 40);
}

TEST_CASE("every gradient-check case names a registered op") {
  std::set<std::string> ops;
  for (const OpDef* op : all_ops()) ops.insert(op->name);
  for (const GradCase& c : all_grad_cases()) {
    INFO("case ", c.name);
    CHECK(ops.count(c.op) == 1);
  }
}

TEST_CASE("every registered gradient-check case passes in float64") {
  int passed = 0;
  double worst = 0;
  for (const GradCase& c : all_grad_cases()) {
    const GradCheckResult r = run_grad_case(c);
    INFO(c.name, ": max abs err ", r.max_abs_err, ", max rel err ", r.max_rel_err, " ", r.message);
    CHECK(r.passed);
    CHECK(r.max_rel_err <= 1e-6);
    passed += r.passed;
    worst = std::max(worst, r.max_rel_err);
  }
  MESSAGE(passed, " of ", all_grad_cases().size(), " op cases passed; worst relative error ",
          worst);
  CHECK(all_grad_cases().size() >= 40);
}
