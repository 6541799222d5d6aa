// gradcheck_all: the gradient checks of everything registered in this program, memgrad's own ops
// and models and those a program built on memgrad defines (MG_OP with MG_GRAD_CASE next to it,
// register_model with check_configs and check_batch). It is the regression suite a user keeps in
// their own tests (docs/library.md), and the same rule as ours holds there: an op registered
// without a gradient-check case, or a model without check variants, fails it.
#pragma once
#include <string>
#include <vector>

#include "engine/gradcheck.hpp"

namespace memgrad {

// Which checks run: op names (each of their registered cases) and model names (each check
// variant). "all" stands for every registered op or model; an empty list runs none of that kind;
// a name nothing registered is an Error (a typo, or an op file the link left out, never passes).
struct GradcheckSelection {
  std::vector<std::string> ops{"all"};
  std::vector<std::string> models{"all"};
};

struct GradcheckReport {
  // Coverage of the whole registry, whatever the selection: both must be empty.
  std::vector<std::string> ops_without_case;
  std::vector<std::string> models_without_checks;
  // One result per op case and per model check variant run (names as `memgrad gradcheck` shows).
  std::vector<GradCheckResult> results;
  int failed = 0;  // failed results
  bool passed() const {
    return failed == 0 && ops_without_case.empty() && models_without_checks.empty();
  }
  // One line per result ("pass"/"FAIL" with its errors), then the missing checks and a total.
  std::string summary() const;
};

GradcheckReport gradcheck_all(const GradcheckSelection& selection = {});

}  // namespace memgrad
