// memgrad gradcheck: runs the registered finite-difference gradient checks.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/gradcheck.hpp"
#include "engine/json_text.hpp"
#include "models/model_check.hpp"
#include "tools/args.hpp"
#include "tools/commands.hpp"

namespace memgrad::cli {
namespace {

const char* kHelp =
    R"(usage: memgrad gradcheck --op all|NAME [--verbose] [--json] [--threads N]
       memgrad gradcheck --model all|NAME [--verbose] [--json] [--threads N]
       memgrad gradcheck --list [--json]

Checks gradients by central finite differences in float64: every registered case of the op
(several random shapes, batch 1 included) is built, its output scalarised with a fixed random
projection, and the analytic gradient of each differentiable input compared element by element
with (f(x+eps) - f(x-eps)) / 2eps, eps = 1e-6. An element passes when
|analytic - numeric| <= atol + rtol*|numeric| (defaults atol 1e-7, rtol 1e-6). The reported
relative error is |analytic - numeric| / max(|analytic|, |numeric|, 1e-3).
With --model, eps is 1e-5 and each parameter tensor must also hold
max |analytic - numeric| <= 1e-4 * max(scale, 5e-6), scale = its largest |analytic| or |numeric|;
the left side over max(scale, 5e-6) is the relative error reported (models/model_check.cpp says
why).
Each case also checks that two backward runs agree exactly and that a zero upstream gradient gives
zero gradients. Stochastic ops replay their noise (same seed and step for every evaluation);
straight-through ops are checked against their declared surrogate; inputs are kept away from
non-differentiable points (relu at 0, ties in sort), as each case's note says.

  --op all|NAME   which op (or all registered ops)
  --model all|NAME  every parameter of the model's check variants (tiny dimensions, multi-step
                  batch), float64
  --verbose       print analytic and numeric gradients side by side (with --model: per
                  parameter, the element where they differ most, both values, its errors)
  --json          {"checks":[{"name","max_abs_err","max_rel_err","passed"}...],"passed":N,"failed":M}
  --list          list registered ops and their cases (with --json: {"cases":[{"op","name"}...]})
Exit code: 0 all passed, 1 a check failed, 2 bad usage.
)";

void print_verbose(const GradCase& c, const GradCheckResult& r) {
  if (!c.note.empty()) std::printf("  note: %s\n", c.note.c_str());
  for (size_t i = 0; i < r.inputs.size(); ++i) {
    const InputReport& in = r.inputs[i];
    if (in.analytic.empty()) continue;
    std::printf("  input %zu: %12s %22s %22s %12s\n", i, "element", "analytic", "numeric",
                "abs err");
    for (size_t j = 0; j < in.analytic.size(); ++j)
      std::printf("  %8s %12zu %22.15g %22.15g %12.3g\n", "", j, in.analytic[j], in.numeric[j],
                  std::fabs(in.analytic[j] - in.numeric[j]));
  }
}

// Per parameter of a model check: its largest gradient, errors, and the element where analytic
// and numeric differ most, both values side by side (the first place to look when one fails).
void print_worst_elements(const GradCheckResult& r) {
  std::printf("    %-30s %8s %10s %22s %22s %10s %10s\n", "parameter", "elements", "worst at",
              "analytic", "numeric", "abs err", "tensor rel");
  for (const InputReport& in : r.inputs) {
    size_t worst = 0;
    for (size_t j = 0; j < in.analytic.size(); ++j)
      if (std::fabs(in.analytic[j] - in.numeric[j]) >
          std::fabs(in.analytic[worst] - in.numeric[worst]))
        worst = j;
    if (in.analytic.empty()) {
      std::printf("    %-30s (no values kept)\n", in.name.c_str());
      continue;
    }
    std::printf("    %-30s %8zu %10zu %22.15g %22.15g %10.3e %10.3e%s\n", in.name.c_str(),
                in.analytic.size(), worst, in.analytic[worst], in.numeric[worst],
                std::fabs(in.analytic[worst] - in.numeric[worst]), in.max_rel_err,
                in.passed ? "" : "  FAIL");
  }
}

// Prints one result row (or collects it as JSON); returns whether it passed.
bool report(const GradCheckResult& r, const std::string& op, bool json, nlohmann::json& checks) {
  if (json) {
    checks.push_back({{"name", r.name},
                      {"op", op},
                      {"max_abs_err", r.max_abs_err},
                      {"max_rel_err", r.max_rel_err},
                      {"passed", r.passed}});
    if (!r.message.empty()) checks.back()["message"] = r.message;
  } else {
    std::printf("%-34s %14.3e %14.3e  %s%s%s\n", r.name.c_str(), r.max_abs_err, r.max_rel_err,
                r.passed ? "pass" : "FAIL", r.message.empty() ? "" : ": ", r.message.c_str());
  }
  return r.passed;
}

int finish(bool json, const nlohmann::json& checks, int passed, int failed) {
  if (json)
    std::cout << dump_json(
                     nlohmann::json{{"checks", checks}, {"passed", passed}, {"failed", failed}}, 2)
              << "\n";
  else
    std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

int check_models(const std::string& which, bool json, bool verbose) {
  // Select before printing anything: a bad name gets the error alone, not under a table header.
  std::vector<const ModelInfo*> selected;
  std::string known;
  for (const ModelInfo& m : all_models()) {
    if (which == "all" || which == m.name) selected.push_back(&m);
    known += known.empty() ? "" : ", ";
    known += m.name;
  }
  if (selected.empty()) {
    std::string message = "no registered model named '";
    message += which;
    message += "' (models: ";
    message += known;
    message += ")";
    throw UsageError(message);
  }
  nlohmann::json checks = nlohmann::json::array();
  int passed = 0, failed = 0;
  if (!json)
    std::printf("%-34s %14s %14s  %s\n", "model/variant", "max abs err", "max rel err", "result");
  for (const ModelInfo* m : selected) {
    for (const GradCheckResult& r : check_model_gradients(*m, verbose)) {
      (report(r, m->name, json, checks) ? passed : failed)++;
      if (verbose && !json) print_worst_elements(r);
    }
  }
  return finish(json, checks, passed, failed);
}

int list_cases(bool json) {
  if (!json) {
    for (const GradCase& c : all_grad_cases())
      std::printf("%-18s %s\n", c.op.c_str(), c.name.c_str());
    return 0;
  }
  nlohmann::json cases = nlohmann::json::array();
  for (const GradCase& c : all_grad_cases()) cases.push_back({{"op", c.op}, {"name", c.name}});
  std::cout << dump_json(nlohmann::json{{"cases", cases}}, 2) << "\n";
  return 0;
}

}  // namespace

int cmd_gradcheck(const Words& words) {
  Args args(words, {"verbose", "json", "list", "help"}, {"op", "threads", "model"});
  if (args.has("help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  threads_option(args);
  const auto op = args.get("op"), model = args.get("model");
  // Each of --list, --op and --model is a run of its own; a second one would be ignored silently.
  if (args.has("list") && (op || model))
    throw UsageError("--list lists every op's cases: it takes no --op or --model (see --help)");
  if (op && model)
    throw UsageError("--op and --model are separate runs: give one of them (see --help)");
  if (args.has("list")) return list_cases(args.has("json"));
  if (model) return check_models(*model, args.has("json"), args.has("verbose"));
  if (!op) throw UsageError("--op all|NAME or --model all|NAME is required (see --help)");
  std::vector<const GradCase*> selected;
  for (const GradCase& c : all_grad_cases())
    if (*op == "all" || c.op == *op) selected.push_back(&c);
  if (selected.empty()) throw UsageError("no registered op named '" + *op + "' (try --list)");

  const bool json = args.has("json"), verbose = args.has("verbose");
  nlohmann::json checks = nlohmann::json::array();
  int passed = 0, failed = 0;
  if (!json) std::printf("%-34s %14s %14s  %s\n", "case", "max abs err", "max rel err", "result");
  for (const GradCase* c : selected) {
    const GradCheckResult r = run_grad_case(*c, verbose);
    (report(r, c->op, json, checks) ? passed : failed)++;
    if (verbose && !json) print_verbose(*c, r);
  }
  return finish(json, checks, passed, failed);
}

}  // namespace memgrad::cli
