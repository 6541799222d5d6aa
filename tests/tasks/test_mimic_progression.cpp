// The mimic-progression data and task on small tables written here
// (mimic_fixture::make_progression_tables): ICD categories, eligible patients and their steps,
// patient splits and training-only vocabularies, lock-step batches with masked rows and the
// patient_start flag, epochs of a fixed length, the two baselines, and bad input.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>

#include "engine/error.hpp"
#include "tasks/mimic_progression.hpp"
#include "tasks/patient_lockstep.hpp"
#include "tasks/task.hpp"
#include "tests/tasks/mimic_fixture.hpp"
#include "tests/test_util.hpp"

using namespace memgrad;
using namespace memgrad::test;
namespace fs = std::filesystem;
namespace fx = memgrad::test::mimic_fixture;

namespace {

mimic::ProgressionData make_data(const fs::path& dir, uint64_t split_seed = 1) {
  mimic::ProgressionOptions o;
  o.load.data_dir = dir.string();
  o.split_seed = split_seed;
  return mimic::make_progression_data(o);
}

}  // namespace

TEST_CASE("mimic-progression: ICD categories keep E codes' four characters and the version") {
  CHECK(mimic::icd_category("4019") == "401");
  CHECK(mimic::icd_category("E8490") == "E849");
  CHECK(mimic::icd_category("V4501") == "V45");
  CHECK(mimic::icd_category("41") == "41");
  CHECK(mimic::icd_category("9:4019") == "9:401");
  CHECK(mimic::icd_category("9:E8490") == "9:E849");
  CHECK(mimic::icd_category("10:E119") == "10:E11");  // ICD-10 E: endocrine, three characters
  CHECK(mimic::icd_category("10:I10") == "10:I10");
}

TEST_CASE("mimic-progression: patients with two or more admissions, split 2/3 : 1/6 : 1/6") {
  TempDir tmp;
  fx::write_tables(tmp.path, fx::make_progression_tables(48));
  const mimic::ProgressionData d = make_data(tmp.path);
  CHECK(d.eligible_patients == 36);  // p % 4 != 0
  CHECK(d.train.size() == 24);
  CHECK(d.valid.size() == 6);
  CHECK(d.test.size() == 6);
  std::set<int64_t> subjects;
  for (const auto* split : {&d.train, &d.valid, &d.test})
    for (const mimic::ProgressionPatient& p : *split) {
      CHECK(subjects.insert(p.subject).second);  // no patient in two splits
      const int index = int(p.subject - 500);
      REQUIRE(p.steps.size() == size_t(index % 4));  // n admissions, n - 1 steps
      for (size_t k = 0; k < p.steps.size(); ++k) {
        const mimic::ProgressionStep& s = p.steps[k];
        // Inputs: category 250 and the acute code, in SEQ_NUM order; one procedure.
        REQUIRE(s.dx.size() == 2);
        CHECK(s.proc.size() == 1);
        // Target: the next admission's chronic category and the acute code its procedure implies.
        std::set<std::string> next;
        for (int32_t j : s.labels) next.insert(d.label_name(j));
        const std::string acute = std::string(1, char('1' + (index + int(k)) % 3));
        CHECK(next == std::set<std::string>{"250", std::string("4") += acute});
        std::set<std::string> here;
        for (int32_t j : s.dx_labels) here.insert(d.label_name(j));
        CHECK(here.count("250") == 1);
      }
    }
  CHECK(subjects.size() == 36);
  // Vocabularies from the training patients only: label frequencies are shares of training steps.
  CHECK(d.label_name(0) == "250");
  CHECK(d.label_frequency[0] == doctest::Approx(1.0));
  // Another split seed, another split.
  const mimic::ProgressionData e = make_data(tmp.path, 2);
  CHECK(e.train.front().subject != d.train.front().subject);
}

TEST_CASE("mimic-progression: full codes instead of categories, and a top-k label vocabulary") {
  TempDir tmp;
  fx::write_tables(tmp.path, fx::make_progression_tables(24));
  mimic::ProgressionOptions o;
  o.load.data_dir = tmp.path.string();
  o.categories = false;
  o.top_dx = 2;
  const mimic::ProgressionData d = mimic::make_progression_data(o);
  CHECK(d.labels() == 2);
  std::set<std::string> codes;
  for (int32_t t = 2; t < int32_t(d.dx_tokens()); ++t)
    codes.insert(d.dx_units[size_t(d.dx_vocab[size_t(t - 2)])]);
  CHECK(codes.count("2500") + codes.count("2501") + codes.count("2502") >= 2);  // full codes
  CHECK(codes.count("250") == 0);
}

TEST_CASE("mimic-progression: lock-step batches mask rows without a step and mark patient starts") {
  TempDir tmp;
  fx::write_tables(tmp.path, fx::make_progression_tables(48));
  const mimic::ProgressionData d = make_data(tmp.path);
  std::vector<int64_t> order(d.train.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = int64_t(i);
  std::vector<int64_t> lengths;
  for (const mimic::ProgressionPatient& p : d.train) lengths.push_back(int64_t(p.steps.size()));
  const std::vector<PatientLockstep::Group> groups = PatientLockstep::groups(lengths, order, 5);
  REQUIRE(groups.size() == 5);  // 24 patients in groups of 5, the last one of 4
  CHECK(groups.back().rows.size() == 4);
  Batch b;
  const PatientLockstep::Group& g = groups.front();
  for (int64_t k = 0; k < g.steps; ++k) {
    mimic::fill_step(d, d.train, g.rows, k, 5, DType::f32, b);
    CHECK(b.size == 5);
    for (int64_t r = 0; r < 5; ++r) {
      const bool here = k < int64_t(d.train[size_t(g.rows[size_t(r)])].steps.size());
      CHECK(b.get("labels_mask").at(r) == (here ? 1 : 0));
      CHECK(b.get("patient_start").at(r) == (k == 0 ? 1 : 0));
      double views = 0;
      for (int64_t t = 0; t < b.get("x1_mask").dim(1); ++t)
        views += b.get("x1_mask").at(r * b.get("x1_mask").dim(1) + t);
      CHECK(views == (here ? 2 : 0));  // a masked row has no events: its memory is kept
    }
  }
  // The last group's fifth row has no patient: masked at every step.
  mimic::fill_step(d, d.train, groups.back().rows, 0, 5, DType::f32, b);
  CHECK(b.get("labels_mask").at(4) == 0);
  CHECK(b.get("x2_mask").at(4 * b.get("x2_mask").dim(1)) == 0);
  CHECK_THROWS_AS(mimic::fill_step(d, d.train, g.rows, g.steps, 5, DType::f32, b), Error);
}

TEST_CASE("mimic-progression task: epochs of one length, batches a pure function of the step") {
  TempDir tmp;
  fx::write_tables(tmp.path, fx::make_progression_tables(48));
  const nlohmann::json settings = {{"data_dir", tmp.path.string()}};
  auto task = create_task("mimic-progression", settings);
  CHECK(task->rows_are_patients());
  CHECK(task->model_dims().at("output") == "set");
  const int64_t per_epoch = task->steps_per_epoch(4);
  // The 24 training patients sorted by their number of steps in groups of 4: each group as long as
  // its first (longest) patient, whatever the permutation of equally long ones.
  const mimic::ProgressionData d = make_data(tmp.path);
  std::vector<size_t> counts;
  for (const auto& p : d.train) counts.push_back(p.steps.size());
  std::sort(counts.rbegin(), counts.rend());
  int64_t expected = 0;
  for (size_t i = 0; i < counts.size(); i += 4) expected += int64_t(counts[i]);
  CHECK(per_epoch == expected);
  Batch a, b;
  auto other = create_task("mimic-progression", settings);
  for (int64_t step : {0, 5, 11, 12, 30}) {
    task->train_batch(step, 4, DType::f32, a);
    other->train_batch(step, 4, DType::f32, b);
    for (const char* f : {"x1", "x2", "labels", "labels_mask", "patient_start"})
      CHECK(a.get(f).to_vector() == b.get(f).to_vector());
  }
  // Every epoch starts a group: all rows start.
  task->train_batch(per_epoch, 4, DType::f32, a);
  for (int64_t r = 0; r < 4; ++r) CHECK(a.get("patient_start").at(r) == 1);
}

TEST_CASE("mimic-progression task: the history baseline repeats the chronic diagnosis") {
  TempDir tmp;
  fx::write_tables(tmp.path, fx::make_progression_tables(48));
  auto task = create_task("mimic-progression", {{"data_dir", tmp.path.string()}});
  // A predictor that knows nothing: every diagnosis the same score.
  const Predictor flat = [&](const Batch& batch) {
    return Tensor::zeros(Shape{batch.size, task->model_dims().at("output_vocab").get<int64_t>()},
                         DType::f32);
  };
  const nlohmann::json m = task->evaluate(flat, 4, DType::f32);
  int64_t steps = 0;
  for (const auto& p : make_data(tmp.path).test) steps += int64_t(p.steps.size());
  CHECK(m.at("steps") == steps);  // every step of the test patients: all have a label
  // The chronic category is in every admission: the history's top diagnosis is always right, and
  // the frequency baseline's too (250 is in every training target).
  CHECK(m.at("history").at("p_at_1").get<double>() == doctest::Approx(1.0));
  CHECK(m.at("frequency").at("p_at_1").get<double>() == doctest::Approx(1.0));
  for (const char* k : {"p_at_1", "p_at_2", "p_at_3", "auc_micro"}) CHECK(m.at(k).is_number());
  CHECK(task->format_metrics(m).find("history") != std::string::npos);
}

TEST_CASE("mimic-progression task: inspection's samples are the test steps, after their context") {
  TempDir tmp;
  fx::write_tables(tmp.path, fx::make_progression_tables(48));
  auto task = create_task("mimic-progression", {{"data_dir", tmp.path.string()}});
  const mimic::ProgressionData d = make_data(tmp.path);
  int64_t steps = 0;
  for (const auto& p : d.test) steps += int64_t(p.steps.size());
  REQUIRE(task->test_examples() == steps);
  Batch sample, context, direct;
  int64_t index = 0;
  for (int64_t p = 0; p < int64_t(d.test.size()); ++p)
    for (int64_t k = 0; k < int64_t(d.test[size_t(p)].steps.size()); ++k, ++index) {
      CAPTURE(index);
      // Its context is the patient's earlier steps, the first of them starting the patient.
      REQUIRE(task->test_example_context(index) == k);
      const int64_t rows[1] = {p};
      for (int64_t j = 0; j < k; ++j) {
        task->test_example_context_batch(index, j, DType::f32, context);
        mimic::fill_step(d, d.test, rows, j, 1, DType::f32, direct);
        CHECK(context.get("x1").to_vector() == direct.get("x1").to_vector());
        CHECK(context.get("patient_start").at(0) == (j == 0 ? 1 : 0));
      }
      CHECK_THROWS_AS(task->test_example_context_batch(index, k, DType::f32, context), Error);
      task->test_example(index, DType::f32, sample);
      mimic::fill_step(d, d.test, rows, k, 1, DType::f32, direct);
      for (const char* f : {"x1", "x2", "labels", "patient_start"})
        CHECK(sample.get(f).to_vector() == direct.get(f).to_vector());
    }
  // The last sample described: its codes by name, the next admission, and both top-5 lists; the
  // chronic category (in every admission) leads the history's.
  const Tensor flat = Tensor::zeros(Shape{1, d.labels()}, DType::f32);
  const Task::Lines lines = task->describe_example(sample, flat);
  std::map<std::string, std::string> by_key(lines.begin(), lines.end());
  for (const char* key :
       {"patient", "diagnoses", "procedures", "next admission", "top 5 (model)", "top 5 (history)"})
    CHECK(by_key.count(key) == 1);
  CHECK(by_key["top 5 (history)"].rfind("250 ", 0) == 0);
  CHECK(by_key["top 5 (history)"].find("(true)") != std::string::npos);
  CHECK(by_key["next admission"].find("250") != std::string::npos);
  CHECK_THROWS_AS(task->test_example(steps, DType::f32, sample), Error);
}

TEST_CASE("mimic-progression: bad input and too few eligible patients are Errors") {
  TempDir tmp;
  fx::Tables t = fx::make_progression_tables(8);
  fx::write_tables(tmp.path / "few", t);  // patients 1, 2, 3, 5, 6, 7: 6 eligible
  CHECK_NOTHROW(make_data(tmp.path / "few"));
  fx::write_tables(tmp.path / "two", fx::make_progression_tables(3));  // 2 eligible
  CHECK_THROWS_WITH_AS(make_data(tmp.path / "two"),
                       doctest::Contains("2 patients have two or more admissions"), Error);
  fx::write_tables(tmp.path / "gone", t);
  fs::remove(tmp.path / "gone" / "PROCEDURES_ICD.csv");
  CHECK_THROWS_WITH_AS(make_data(tmp.path / "gone"),
                       doctest::Contains("missing table PROCEDURES_ICD"), Error);
  CHECK_THROWS_WITH_AS(
      create_task("mimic-progression", {{"data_dir", (tmp.path / "few").string()}, {"top_dx", -1}}),
      doctest::Contains("top_dx"), Error);
}

TEST_CASE("mimic-progression: icd9_to_10 maps ICD-9 diagnoses to their first ICD-10 target") {
  TempDir tmp;
  fx::write_tables(tmp.path / "data", fx::make_progression_tables(24));
  fx::write(tmp.path / "gem.csv",
            "icd_9,icd_10,flags\n2500,E119,00000\n2500,E118,00000\n"
            "2501,E1010,00000\n");
  mimic::ProgressionOptions o;
  o.load.data_dir = (tmp.path / "data").string();
  o.icd9_to_10 = (tmp.path / "gem.csv").string();
  const mimic::ProgressionData d = mimic::make_progression_data(o);
  CHECK(d.icd9_mapped == 2);    // 2500, 2501
  CHECK(d.icd9_unmapped == 5);  // 2502 and the acute codes 40-43: kept as they are
  std::set<std::string> units(d.dx_units.begin(), d.dx_units.end());
  CHECK(units.count("10:E11") == 1);  // 2500 -> E119 (the first target), category E11
  CHECK(units.count("10:E10") == 1);
  CHECK(units.count("250") == 1);  // 2502
  o.icd9_to_10 = (tmp.path / "missing.csv").string();
  CHECK_THROWS_WITH_AS(mimic::make_progression_data(o), doctest::Contains("missing.csv"), Error);
  fx::write(tmp.path / "bad.csv", "from,to\n2500,E119\n");
  o.icd9_to_10 = (tmp.path / "bad.csv").string();
  CHECK_THROWS_WITH_AS(mimic::make_progression_data(o), doctest::Contains("no column 'icd_9'"),
                       Error);
}
