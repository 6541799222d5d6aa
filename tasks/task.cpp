#include "tasks/task.hpp"

#include <sstream>

#include "engine/error.hpp"
#include "engine/json_text.hpp"
#include "engine/quote.hpp"

namespace memgrad {
namespace {
std::vector<TaskInfo>& registry() {
  static std::vector<TaskInfo> tasks;  // filled during static initialisation, read-only after
  return tasks;
}
}  // namespace

nlohmann::json merge_task_settings(const std::string& task, const nlohmann::json& defaults,
                                   const nlohmann::json& user) {
  nlohmann::json s = defaults;
  if (user.is_null()) return s;
  MG_CHECK(user.is_object(), task, ": settings must be a JSON object, got ",
           quote(dump_json(user)));
  for (auto it = user.begin(); it != user.end(); ++it) {
    std::string known;
    for (auto k = defaults.begin(); k != defaults.end(); ++k)
      known += (known.empty() ? "" : ", ") + k.key();
    MG_CHECK(defaults.contains(it.key()), task, ": unknown setting ", quote(it.key()),
             " (known: ", known, ")");
    s[it.key()] = *it;
  }
  return s;
}

int64_t setting_int(const nlohmann::json& s, const std::string& task, const char* key, int64_t lo,
                    int64_t hi) {
  const nlohmann::json& v = s.at(key);
  MG_CHECK(v.is_number_integer() && v.get<int64_t>() >= lo && v.get<int64_t>() <= hi, task, ": ",
           key, " must be a whole number in [", lo, ", ", hi, "], got ", dump_json(v));
  return v.get<int64_t>();
}

std::string selected_line(const nlohmann::json& m) {
  if (!m.contains("selected")) return {};
  std::ostringstream out;
  out << "  parameters of epoch " << m["selected"].value("epoch", 0) << " (best "
      << m["selected"].value("metric", "") << " " << m["selected"].value("value", 0.0) << ")\n";
  return out.str();
}

void register_task(TaskInfo info) { registry().push_back(std::move(info)); }
const std::vector<TaskInfo>& all_tasks() { return registry(); }

std::vector<ExampleScore> Task::example_scores(const Predictor& predict, int64_t batch_size,
                                               DType dtype) {
  (void)predict, (void)batch_size, (void)dtype;
  fail("task ", name(), " does not write per-example scores");
}

nlohmann::json Task::epoch_scores(const Predictor& predict, int64_t batch_size, DType dtype) {
  const std::optional<double> v = selection_score(predict, batch_size, dtype);
  return {{selection_metric(), v ? nlohmann::json(*v) : nlohmann::json(nullptr)}};
}

std::string Task::scores_csv(const Predictor& predict, int64_t batch_size, DType dtype) {
  return example_scores_csv(example_scores(predict, batch_size, dtype));
}

void Task::test_example(int64_t index, DType dtype, Batch& batch) {
  (void)index, (void)dtype, (void)batch;
  fail("task ", name(), " has no single test samples to inspect");
}

void Task::test_example_context_batch(int64_t index, int64_t k, DType dtype, Batch& batch) {
  (void)index, (void)k, (void)dtype, (void)batch;
  fail("task ", name(), ": test sample ", index, " has no earlier batches");
}

void Task::text_example(const std::string& text, DType dtype, Batch& batch) {
  (void)text, (void)dtype, (void)batch;
  fail("task ", name(), " does not read samples written as text (use --sample N)");
}

Task::Lines Task::describe_example(const Batch& batch, const Tensor& predictions) const {
  Lines lines;
  for (const auto& [field, t] : batch.fields()) lines.emplace_back(field, t.shape().str());
  lines.emplace_back("predictions", predictions.shape().str());
  return lines;
}

Task::StepObservations Task::step_observations(const Batch& batch) const {
  (void)batch;
  return {};
}

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
