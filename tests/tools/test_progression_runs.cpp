// mimic-progression with DMNC's persistent memory, on small MIMIC-III tables written here
// (mimic_fixture::make_progression_tables): through the task's own batches, persistence changes
// the predictions of a patient's later admissions and is cleared when a group of patients starts,
// and a row masked at a step keeps its memory; `memgrad train --persistent-memory true` runs on
// this task (rows are patients) and is still refused on mimic-drugs; bad tables stop with exit 2.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/json_text.hpp"
#include "models/dnc/dmnc.hpp"
#include "models/model.hpp"
#include "tasks/ehr_synth.hpp"
#include "tasks/task.hpp"
#include "tests/tasks/mimic_fixture.hpp"
#include "tests/tools/cli_run.hpp"
#include "tools/test_sample.hpp"

using namespace memgrad;
using namespace memgrad::test;
using memgrad::cli::cmd_train;
namespace fs = std::filesystem;
namespace fx = memgrad::test::mimic_fixture;

namespace {

std::unique_ptr<Model> make_dmnc(const Task& task, bool persistent) {
  nlohmann::json cfg;
  for (const ModelInfo& m : all_models())
    if (m.name == "dmnc-late") cfg = m.default_config;
  cfg.update(task.model_dims());
  cfg["embedding"] = 8, cfg["hidden"] = 8, cfg["word_size"] = 6, cfg["memory_slots"] = 5;
  cfg["read_heads"] = 1;
  cfg["persistent_memory"] = persistent;
  return create_model("dmnc-late", cfg, DType::f64, 3);
}

std::vector<double> predict(Model& model, const Batch& batch) {
  Tape tape;
  tape.set_grad_enabled(false);
  ForwardOptions opts;
  opts.training = false;
  return model.forward(tape, batch, opts).predictions.value().to_vector();
}

double row_diff(const std::vector<double>& a, const std::vector<double>& b, int64_t row,
                int64_t v) {
  double d = 0;
  for (int64_t j = 0; j < v; ++j)
    d = std::max(d, std::abs(a[size_t(row * v + j)] - b[size_t(row * v + j)]));
  return d;
}

}  // namespace

TEST_CASE(
    "mimic-progression: persistent memory carries a patient's admissions through the task's "
    "batches and is cleared when the next group of patients starts") {
  TempDir tmp;
  fx::write_tables(tmp.path, fx::make_progression_tables(48));
  auto task = create_task("mimic-progression", {{"data_dir", tmp.path.string()}});
  const int64_t v = task->model_dims().at("output_vocab").get<int64_t>(), B = 4;
  auto carried = make_dmnc(*task, true), flushed = make_dmnc(*task, false);
  int64_t later_rows = 0, starts = 0, masked_rows = 0;
  Batch batch, previous;
  for (int64_t step = 0; step < task->steps_per_epoch(B); ++step) {
    task->train_batch(step, B, DType::f64, batch);
    const std::vector<double> p = predict(*carried, batch), q = predict(*flushed, batch);
    for (int64_t r = 0; r < B; ++r) {
      const bool start = batch.get("patient_start").at(r) != 0;
      const bool scored = batch.get("labels_mask").at(r) != 0;
      if (start) {
        // A patient's first admission: nothing is carried, the same as without persistence.
        CHECK(row_diff(p, q, r, v) == 0.0);
        ++starts;
      } else if (scored) {
        // A later admission: the memory of the earlier ones changes the prediction.
        CHECK(row_diff(p, q, r, v) > 1e-9);
        ++later_rows;
      } else {
        ++masked_rows;
      }
    }
  }
  CHECK(starts > 0);
  CHECK(later_rows > 0);
  CHECK(masked_rows > 0);  // the fixture's patients have 1-3 steps: shorter rows wait masked
}

TEST_CASE("mimic-progression: deepcare carries each row's state across a patient's admissions") {
  TempDir tmp;
  fx::write_tables(tmp.path, fx::make_progression_tables(48));
  auto task = create_task("mimic-progression", {{"data_dir", tmp.path.string()}});
  const int64_t v = task->model_dims().at("output_vocab").get<int64_t>(), B = 4;
  auto make = [&](bool carry) {
    nlohmann::json cfg = task->model_dims();
    cfg["embedding"] = 5, cfg["hidden"] = 6, cfg["carry_state"] = carry;
    return create_model("deepcare", cfg, DType::f64, 4);
  };
  auto carried = make(true), alone = make(false);
  int64_t later_rows = 0, starts = 0;
  Batch batch;
  for (int64_t step = 0; step < task->steps_per_epoch(B); ++step) {
    task->train_batch(step, B, DType::f64, batch);
    const std::vector<double> p = predict(*carried, batch), q = predict(*alone, batch);
    for (int64_t r = 0; r < B; ++r) {
      if (batch.get("patient_start").at(r) != 0) {
        CHECK(row_diff(p, q, r, v) == 0.0);
        ++starts;
      } else if (batch.get("labels_mask").at(r) != 0) {
        CHECK(row_diff(p, q, r, v) > 1e-9);
        ++later_rows;
      }
    }
  }
  CHECK(starts > 0);
  CHECK(later_rows > 0);
}

TEST_CASE(
    "mimic-progression: a row masked at a step keeps its memory for its patient's next step") {
  TempDir tmp;
  fx::write_tables(tmp.path, fx::make_progression_tables(48));
  auto task = create_task("mimic-progression", {{"data_dir", tmp.path.string()}});
  const int64_t v = task->model_dims().at("output_vocab").get<int64_t>(), B = 4;
  // A group's first two steps, and the same with an all-masked step between them: the second
  // admission's predictions are the same (the masked step changed no memory).
  Batch first, second, blank;
  int64_t step = 0;
  for (;; ++step) {  // a group start followed by a step of the same group
    task->train_batch(step, B, DType::f64, first);
    task->train_batch(step + 1, B, DType::f64, second);
    if (first.get("patient_start").at(0) != 0 && second.get("patient_start").at(0) == 0) break;
    REQUIRE(step < 100);
  }
  task->train_batch(step + 1, B, DType::f64, blank);  // its own storage, then every row masked
  for (const char* f : {"x1_mask", "x2_mask", "labels_mask", "patient_start"})
    blank.field(f, second.get(f).shape(), DType::f64);  // zero-filled
  auto a = make_dmnc(*task, true), b = make_dmnc(*task, true);
  predict(*a, first);
  const std::vector<double> direct = predict(*a, second);
  predict(*b, first);
  predict(*b, blank);
  const std::vector<double> after_gap = predict(*b, second);
  for (int64_t r = 0; r < B; ++r) CHECK(row_diff(direct, after_gap, r, v) == 0.0);
}

TEST_CASE(
    "mimic-progression: train --persistent-memory true on patients' rows; refused on "
    "mimic-drugs; metrics.json has P@1-3 and both baselines") {
  TempDir tmp;
  fx::write_tables(tmp.path / "data", fx::make_progression_tables(48), /*gz=*/true);
  const std::string data = (tmp.path / "data").string();
  const fs::path out = tmp.path / "run";
  const Run r = run(cmd_train, {"--task",
                                "mimic-progression",
                                "--model",
                                "dmnc-late",
                                "--persistent-memory",
                                "true",
                                "--data",
                                data,
                                "--embedding",
                                "8",
                                "--hidden",
                                "8",
                                "--word-size",
                                "8",
                                "--memory-slots",
                                "6",
                                "--read-heads",
                                "1",
                                "--epochs",
                                "2",
                                "--iterations",
                                "0",
                                "--batch",
                                "4",
                                "--threads",
                                "1",
                                "--quiet",
                                "--out",
                                out.string()});
  REQUIRE_MESSAGE(r.code == 0, r.error);
  std::ifstream in(out / "metrics.json");
  const nlohmann::json m = parse_json(in);
  for (const char* key : {"p_at_1", "p_at_2", "p_at_3", "auc_micro"}) {
    CHECK(m.at(key).is_number());
    CHECK(m.at("history").at(key).is_number());
    CHECK(m.at("frequency").at(key).is_number());
  }
  CHECK(m.at("data").at("eligible_patients") == 36);
  CHECK(r.out.find("history") != std::string::npos);

  fx::write_tables(tmp.path / "drugs", fx::make_tables(12));
  const Run refused =
      run(cmd_train,
          {"--task", "mimic-drugs", "--model", "dmnc-late", "--persistent-memory", "true", "--data",
           (tmp.path / "drugs").string(), "--quiet", "--out", (tmp.path / "refused").string()});
  CHECK(refused.code == 2);
  CHECK(refused.error.find("persistent_memory") != std::string::npos);
  CHECK_FALSE(fs::exists(tmp.path / "refused"));
}

TEST_CASE("mimic-progression: a diagnosis of an admission ADMISSIONS lacks is exit 2, no run") {
  TempDir tmp;
  fx::Tables t = fx::make_progression_tables(8);
  t.diagnoses += "99,501,4242,1,\"401\"\n";
  fx::write_tables(tmp.path / "data", t);
  const fs::path out = tmp.path / "run";
  const Run r = run(cmd_train, {"--task", "mimic-progression", "--model", "dmnc-late", "--data",
                                (tmp.path / "data").string(), "--quiet", "--out", out.string()});
  CHECK(r.code == 2);
  CHECK(r.error.find("DIAGNOSES_ICD.csv:") != std::string::npos);
  CHECK(r.error.find("column HADM_ID: admission 4242 is not in ADMISSIONS") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE(
    "mimic-progression: deepcare learns the next admission's diagnosis from the current "
    "procedure, which the baselines cannot") {
  TempDir tmp;
  fx::write_tables(tmp.path / "data", fx::make_progression_tables(96));
  const fs::path out = tmp.path / "run";
  const Run r =
      run(cmd_train, {"--task", "mimic-progression", "--model", "deepcare", "--data",
                      (tmp.path / "data").string(), "--epochs", "20", "--iterations", "0",
                      "--batch", "8", "--threads", "1", "--quiet", "--out", out.string()});
  REQUIRE_MESSAGE(r.code == 0, r.error);
  std::ifstream in(out / "metrics.json");
  const nlohmann::json m = parse_json(in);
  // The next admission: the chronic category (every baseline has it first) and the acute code
  // the current procedure implies (no baseline knows it).
  CHECK(m.at("p_at_2").get<double>() > 0.95);
  CHECK(m.at("history").at("p_at_2").get<double>() < 0.8);
  CHECK(m.at("frequency").at("p_at_2").get<double>() < 0.8);
}

TEST_CASE(
    "mimic-progression: train --unroll K backpropagates through K admissions per update; refused "
    "where nothing is carried or rows are independent") {
  TempDir tmp;
  fx::write_tables(tmp.path / "data", fx::make_progression_tables(48));
  const std::string data = (tmp.path / "data").string();
  auto train = [&](const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> words = {"--task",
                                      "mimic-progression",
                                      "--data",
                                      data,
                                      "--batch",
                                      "4",
                                      "--threads",
                                      "1",
                                      "--quiet",
                                      "--iterations",
                                      "0",
                                      "--out",
                                      (tmp.path / name).string()};
    words.insert(words.end(), extra.begin(), extra.end());
    return run(cmd_train, words);
  };
  auto updates = [&](const std::string& name) {
    std::ifstream in(tmp.path / name / "log.jsonl");
    int64_t last = -1;
    for (std::string line; std::getline(in, line);) {
      const nlohmann::json j = parse_json(line);
      if (j.contains("step")) last = j.at("step").get<int64_t>();
    }
    return last;
  };
  const Run one = train("one", {"--model", "deepcare", "--epochs", "1", "--log-every", "1"});
  REQUIRE_MESSAGE(one.code == 0, one.error);
  const Run three =
      train("three", {"--model", "deepcare", "--epochs", "1", "--log-every", "1", "--unroll", "3"});
  REQUIRE_MESSAGE(three.code == 0, three.error);
  // The same epoch of task steps in a third of the updates (rounded up).
  const int64_t steps = updates("one") + 1, windows = updates("three") + 1;
  CHECK(steps > 3);
  CHECK(windows == (steps + 2) / 3);
  const Run dmnc =
      train("dmnc", {"--model", "dmnc-late", "--persistent-memory", "true", "--embedding", "8",
                     "--hidden", "8", "--word-size", "6", "--memory-slots", "5", "--read-heads",
                     "1", "--epochs", "1", "--unroll", "2"});
  REQUIRE_MESSAGE(dmnc.code == 0, dmnc.error);
  CHECK(fs::exists(tmp.path / "dmnc" / "metrics.json"));

  const Run flushed = train("flushed", {"--model", "dmnc-late", "--epochs", "1", "--unroll", "2"});
  CHECK(flushed.code == 2);
  CHECK(flushed.error.find("carries no state") != std::string::npos);
  CHECK_FALSE(fs::exists(tmp.path / "flushed"));
  const Run zero = train("zero", {"--model", "deepcare", "--epochs", "1", "--unroll", "0"});
  CHECK(zero.code == 2);
  CHECK(zero.error.find("unroll (--unroll) must be >= 1") != std::string::npos);
  const Run independent = run(cmd_train, {"--task", "sum2seq", "--model", "lstm", "--unroll", "2",
                                          "--quiet", "--out", (tmp.path / "sum2seq").string()});
  CHECK(independent.code == 2);
  CHECK(independent.error.find("independent samples") != std::string::npos);
  CHECK_FALSE(fs::exists(tmp.path / "sum2seq"));
}

TEST_CASE(
    "mimic-progression on `ehr-gen --follow-pairs` data: metrics.json scores the planted "
    "two-admissions-later rule, with its oracle far above chance") {
  TempDir tmp;
  ehr_synth::Options o;
  o.patients = 400, o.extra_admission = 0.7, o.dx_codes = 400, o.proc_codes = 200;
  o.rule_drugs = 6, o.tail_drugs = 0, o.dx_mean = 4, o.follow_pairs = 6, o.seed = 3;
  ehr_synth::generate(o, (tmp.path / "data").string());
  const fs::path out = tmp.path / "run";
  const Run r = run(cmd_train, {"--task",       "mimic-progression",
                                "--model",      "deepcare",
                                "--data",       (tmp.path / "data").string(),
                                "--categories", "false",
                                "--epochs",     "1",
                                "--iterations", "0",
                                "--batch",      "8",
                                "--unroll",     "2",
                                "--threads",    "1",
                                "--out",        out.string()});
  REQUIRE_MESSAGE(r.code == 0, r.error);
  CHECK(r.out.find("follow rule (") != std::string::npos);
  std::ifstream in(out / "metrics.json");
  const nlohmann::json f = parse_json(in).at("follow_rule");
  CHECK(f.at("pairs").get<int64_t>() >= 1);
  CHECK(f.at("pairs").get<int64_t>() <= 6);
  CHECK(f.at("due").get<int64_t>() > 0);
  CHECK(f.at("oracle_auc_macro").get<double>() > 0.8);
  CHECK(f.at("auc_macro").is_number());
  CHECK(f.at("history_auc_macro").get<double>() < f.at("oracle_auc_macro").get<double>());

  // Model selection on the validation follow-rule AUC (select_on follow_auc).
  const Run chosen = run(cmd_train, {"--task",
                                     "mimic-progression",
                                     "--model",
                                     "deepcare",
                                     "--data",
                                     (tmp.path / "data").string(),
                                     "--categories",
                                     "false",
                                     "--select-on",
                                     "follow_auc",
                                     "--epochs",
                                     "2",
                                     "--iterations",
                                     "0",
                                     "--batch",
                                     "8",
                                     "--threads",
                                     "1",
                                     "--quiet",
                                     "--out",
                                     (tmp.path / "chosen").string()});
  REQUIRE_MESSAGE(chosen.code == 0, chosen.error);
  std::ifstream chosen_in(tmp.path / "chosen" / "metrics.json");
  CHECK(parse_json(chosen_in).at("selected").at("metric") == "valid_follow_auc");

  // Real MIMIC folders have no rules.json: no follow_rule entry, and no selection on it.
  fx::write_tables(tmp.path / "mimic", fx::make_progression_tables(24));
  const Run plain = run(
      cmd_train, {"--task", "mimic-progression", "--model", "deepcare", "--data",
                  (tmp.path / "mimic").string(), "--epochs", "1", "--iterations", "0", "--batch",
                  "4", "--threads", "1", "--quiet", "--out", (tmp.path / "plain").string()});
  REQUIRE_MESSAGE(plain.code == 0, plain.error);
  std::ifstream plain_in(tmp.path / "plain" / "metrics.json");
  CHECK_FALSE(parse_json(plain_in).contains("follow_rule"));
  const Run no_pairs =
      run(cmd_train, {"--task", "mimic-progression", "--model", "deepcare", "--data",
                      (tmp.path / "mimic").string(), "--select-on", "follow_auc", "--quiet",
                      "--out", (tmp.path / "no-pairs").string()});
  CHECK(no_pairs.code == 2);
  CHECK(no_pairs.error.find("select_on follow_auc needs data with follow pairs") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(tmp.path / "no-pairs"));

  // A rules.json that is not the generator's: exit 2 naming it.
  std::ofstream(tmp.path / "data" / "rules.json") << "{\"follow\": {\"pairs\": [{}]}}";
  const Run bad = run(
      cmd_train, {"--task", "mimic-progression", "--model", "deepcare", "--data",
                  (tmp.path / "data").string(), "--quiet", "--out", (tmp.path / "bad").string()});
  CHECK(bad.code == 2);
  CHECK(bad.error.find("rules.json: not the rules.json of `memgrad ehr-gen`") != std::string::npos);
  CHECK_FALSE(fs::exists(tmp.path / "bad"));
}

TEST_CASE("mimic-progression: a shown sample runs the patient's earlier admissions first") {
  TempDir tmp;
  fx::write_tables(tmp.path, fx::make_progression_tables(48));
  auto task = create_task("mimic-progression", {{"data_dir", tmp.path.string()}});
  auto model = make_dmnc(*task, true);
  // The first test sample with two earlier steps.
  int64_t index = 0;
  while (task->test_example_context(index) < 2) ++index;
  Batch batch;
  // As memgrad inspect and memgrad figure load it: the context batches, then the sample.
  memgrad::cli::load_test_sample(*task, *model, index, DType::f64, batch);
  const std::vector<double> with_context = predict(*model, batch);
  // The patient stepped from its first admission, as evaluation steps it, gives the same scores.
  for (int64_t k = 0; k < 3; ++k) {
    task->test_example(index - 2 + k, DType::f64, batch);
    const std::vector<double> p = predict(*model, batch);
    if (k == 2) CHECK(p == with_context);
  }
  // Without its context the persistent memory starts empty (or from the previous patient's
  // state): different scores, which is why inspect runs the context.
  model->reset_state();
  task->test_example(index, DType::f64, batch);
  const int64_t v = task->model_dims().at("output_vocab").get<int64_t>();
  CHECK(row_diff(predict(*model, batch), with_context, 0, v) > 1e-9);
}
