#include "models/registry_check.hpp"

#include <algorithm>
#include <cstdio>

#include "engine/error.hpp"
#include "models/model_check.hpp"

namespace memgrad {
namespace {

bool wanted(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), "all") != names.end() ||
         std::find(names.begin(), names.end(), name) != names.end();
}

// Every selected name other than "all" must be registered.
void require_registered(const std::vector<std::string>& selected,
                        const std::vector<std::string>& registered, const char* kind) {
  for (const std::string& name : selected) {
    if (name == "all") continue;
    if (std::find(registered.begin(), registered.end(), name) != registered.end()) continue;
    std::string known;
    for (const std::string& r : registered) known += (known.empty() ? "" : ", ") + r;
    MG_CHECK(false, "gradcheck_all: no registered ", kind, " named '", name, "' (", kind,
             "s: ", known, ")");
  }
}

}  // namespace

GradcheckReport gradcheck_all(const GradcheckSelection& selection) {
  std::vector<std::string> op_names, model_names;
  for (const OpDef* op : all_ops())
    if (!op->leaf) op_names.push_back(op->name);
  for (const ModelInfo& m : all_models()) model_names.push_back(m.name);
  require_registered(selection.ops, op_names, "op");
  require_registered(selection.models, model_names, "model");

  GradcheckReport report;
  report.ops_without_case = ops_without_grad_case();
  for (const ModelInfo& m : all_models())
    if (m.check_configs.empty() || !m.check_batch) report.models_without_checks.push_back(m.name);
  for (const GradCase& c : all_grad_cases())
    if (wanted(selection.ops, c.op)) report.results.push_back(run_grad_case(c));
  for (const ModelInfo& m : all_models()) {
    if (!wanted(selection.models, m.name) || m.check_configs.empty() || !m.check_batch) continue;
    for (GradCheckResult& r : check_model_gradients(m)) report.results.push_back(std::move(r));
  }
  for (const GradCheckResult& r : report.results) report.failed += r.passed ? 0 : 1;
  return report;
}

std::string GradcheckReport::summary() const {
  std::string out;
  char line[256];
  for (const GradCheckResult& r : results) {
    std::snprintf(line, sizeof line, "%-34s max abs err %.3e  max rel err %.3e  %s", r.name.c_str(),
                  r.max_abs_err, r.max_rel_err, r.passed ? "pass" : "FAIL");
    out += line;
    if (!r.message.empty()) out += ": " + r.message;
    out += "\n";
  }
  for (const std::string& op : ops_without_case)
    out += "op '" + op + "' has no gradient-check case (register one next to it: MG_GRAD_CASE)\n";
  for (const std::string& m : models_without_checks)
    out += "model '" + m + "' has no gradient checks (ModelInfo check_configs and check_batch)\n";
  std::snprintf(line, sizeof line, "%d passed, %d failed, %zu ops and %zu models without checks\n",
                int(results.size()) - failed, failed, ops_without_case.size(),
                models_without_checks.size());
  return out + line;
}

}  // namespace memgrad
