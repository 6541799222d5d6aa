#include "tasks/task.hpp"

#include "engine/error.hpp"

namespace memgrad {
namespace {
std::vector<TaskInfo>& registry() {
  static std::vector<TaskInfo> tasks;  // filled during static initialisation, read-only after
  return tasks;
}
}  // namespace

void register_task(TaskInfo info) { registry().push_back(std::move(info)); }
const std::vector<TaskInfo>& all_tasks() { return registry(); }

std::unique_ptr<Task> create_task(const std::string& name, const nlohmann::json& settings) {
  std::string known;
  for (const TaskInfo& t : registry()) {
    if (t.name == name) return t.create(settings);
    if (!known.empty()) known += ", ";
    known += t.name;
  }
  fail("unknown task '", name, "' (known: ", known, ")");
}

}  // namespace memgrad
