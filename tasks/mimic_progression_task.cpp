// The `mimic-progression` task (DMNC paper, section 4.3, Table 5): a patient's admissions in time
// order, each admission's diagnoses and procedures in, the next admission's diagnoses out as a set
// (data in mimic_progression.hpp). Batch rows are patients (rows_are_patients()), stepped admission
// by admission, so that DMNC's persistent memory carries a patient's history. Evaluation scores
// every step of the test patients with P@1/2/3 next to two baselines on the same steps: "repeat
// the patient's history" and "frequency on train". Model selection keeps the epoch of best
// validation micro AUC.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <numeric>
#include <sstream>

#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "tasks/ehr_synth.hpp"
#include "tasks/metrics.hpp"
#include "tasks/mimic_progression.hpp"
#include "tasks/patient_lockstep.hpp"
#include "tasks/task.hpp"

namespace memgrad {
namespace {

const nlohmann::json kDefaults = {{"data_dir", "../shared/data/mimic-iii-demo"},
                                  {"categories", true},
                                  {"icd9_to_10", ""},
                                  {"top_dx", 0},
                                  {"split_seed", 1},
                                  {"select_on", "auc_micro"},
                                  {"seed", 1}};

constexpr uint64_t kOrderSalt = 0x9e7a'0019'0000'0003ULL;
constexpr int kTopK[] = {1, 2, 3};

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// The "repeat the patient's history" baseline's score of a diagnosis: the number of the patient's
// admissions so far that have it, ties going to the more frequent on train.
double history_score(double admissions_with_it, double train_frequency) {
  return admissions_with_it + 0.5 * train_frequency;
}

// P@1..3 (share of the k highest-scored diagnoses that are in the next admission, averaged over
// the scored steps) and AUC over the (step, diagnosis) pairs (micro) and per diagnosis (macro).
nlohmann::json progression_metrics(const metrics::LabelMatrix& labels,
                                   const metrics::ScoreMatrix& scores) {
  const metrics::MultiLabelReport r =
      metrics::evaluate_multilabel(labels, scores, 0.5, {std::begin(kTopK), std::end(kTopK)});
  nlohmann::json m = {{"auc_macro", r.auc_macro.value_or(NAN)},
                      {"auc_micro", r.auc_micro.value_or(NAN)},
                      {"steps", labels.size()}};
  for (const metrics::AtK& a : r.at_k) {
    m["p_at_" + std::to_string(a.k)] = a.precision.value_or(NAN);
    m["r_at_" + std::to_string(a.k)] = a.recall.value_or(NAN);
  }
  return m;
}

class MimicProgressionTask : public Task {
 public:
  explicit MimicProgressionTask(const nlohmann::json& user)
      : settings_(merge_task_settings("mimic-progression", kDefaults, user)) {
    mimic::ProgressionOptions o;
    try {
      o.load.data_dir = settings_.at("data_dir").get<std::string>();
      o.categories = settings_.at("categories").get<bool>();
      o.icd9_to_10 = settings_.at("icd9_to_10").get<std::string>();
      o.top_dx = setting_int(settings_, "mimic-progression", "top_dx", 0, 1000000);
      o.split_seed =
          uint64_t(setting_int(settings_, "mimic-progression", "split_seed", 0, INT64_MAX));
      seed_ = uint64_t(setting_int(settings_, "mimic-progression", "seed", 0, INT64_MAX));
      select_on_follow_ = settings_.at("select_on").get<std::string>() == "follow_auc";
      MG_CHECK(select_on_follow_ || settings_.at("select_on") == "auc_micro",
               "mimic-progression: select_on (--select-on) takes auc_micro or follow_auc, got ",
               settings_.at("select_on").get<std::string>());
    } catch (const nlohmann::json::exception& e) {
      fail("mimic-progression: bad setting type (", e.what(), ")");
    }
    data_ = mimic::make_progression_data(o);
    const std::vector<mimic::ProgressionPatient>* splits[3] = {&data_.train, &data_.valid,
                                                               &data_.test};
    for (size_t s = 0; s < 3; ++s)
      for (const mimic::ProgressionPatient& p : *splits[s])
        lengths_[s].push_back(int64_t(p.steps.size()));
    follow_ = follow_labels(ehr_synth::read_follow_pairs(o.load.data_dir));
    MG_CHECK(!select_on_follow_ || !follow_.empty(),
             "mimic-progression: select_on follow_auc needs data with follow pairs (`memgrad "
             "ehr-gen --follow-pairs K`, full codes: --categories false); ",
             o.load.data_dir, " has none");
    report_load();
  }

  std::string name() const override { return "mimic-progression"; }
  nlohmann::json config() const override { return settings_; }
  nlohmann::json model_dims() const override {
    return {{"input_vocab", data_.dx_tokens()},
            {"input_vocab2", data_.proc_tokens()},
            {"output_vocab", data_.labels()},
            {"output", "set"}};
  }
  bool rows_are_patients() const override { return true; }

  // An epoch: the training patients in lock-step groups (tasks/patient_lockstep.hpp: a
  // permutation of (seed, epoch), longest first, groups permuted; every epoch as many steps).
  int64_t steps_per_epoch(int64_t batch_size) const override {
    return lockstep_.steps_per_epoch(lengths_[0], std::max<int64_t>(1, batch_size));
  }
  void train_batch(int64_t step, int64_t batch_size, DType dtype, Batch& batch) override {
    const auto [rows, k] = lockstep_.train_step(lengths_[0], seed_ ^ kOrderSalt, step, batch_size);
    mimic::fill_step(data_, data_.train, rows, k, batch_size, dtype, batch);
  }
  void largest_train_batch(int64_t batch_size, DType dtype, Batch& batch) override {
    mimic::largest_step(data_, batch_size, dtype, batch);
  }
  // Validation loss batches: the validation patients' steps, group by group, in order.
  int64_t validation_batches(int64_t batch_size) const override {
    int64_t steps = 0;
    for (const PatientLockstep::Group& g : eval_groups(data_.valid, batch_size)) steps += g.steps;
    return steps;
  }
  void validation_batch(int64_t index, int64_t batch_size, DType dtype, Batch& batch) override {
    for (const PatientLockstep::Group& g : eval_groups(data_.valid, batch_size)) {
      if (index < g.steps)
        return mimic::fill_step(data_, data_.valid, g.rows, index, batch_size, dtype, batch);
      index -= g.steps;
    }
    fail("mimic-progression: validation batch out of range");
  }

  nlohmann::json evaluate(const Predictor& predict, int64_t batch_size, DType dtype) override {
    const Scored s = score(predict, data_.test, batch_size, dtype);
    nlohmann::json m = progression_metrics(s.labels, s.probs);
    m["history"] = progression_metrics(s.labels, s.history);
    m["frequency"] = progression_metrics(s.labels, s.frequency);
    if (!follow_.empty()) m["follow_rule"] = follow_metrics(s);
    m["data"] = data_summary();
    m["definition"] =
        "every step of the test patients (split by patient, split_seed) whose next admission has "
        "a label diagnosis: admission a's diagnoses and procedures in, admission a+1's diagnoses "
        "(labels) out; p_at_k: share of the k highest-scored diagnoses that are in admission a+1, "
        "averaged over the steps; r_at_k: share of admission a+1's diagnoses among them; "
        "auc_micro / auc_macro: AUC-ROC over all (step, diagnosis) pairs / per diagnosis; "
        "history: each diagnosis scored by the number of the patient's admissions 1..a that have "
        "it, ties by its training frequency; frequency: by its share of the training steps' "
        "targets";
    return m;
  }

  std::string format_metrics(const nlohmann::json& m) const override {
    std::ostringstream out;
    out << "mimic-progression: " << m.at("steps").get<int64_t>() << " test steps, "
        << data_.labels() << " diagnoses\n"
        << "  scores       AUC-micro    P@1    P@2    P@3\n";
    char line[160];
    auto row = [&](const char* name, const nlohmann::json& j) {
      std::snprintf(line, sizeof line, "  %-11s  %9.4f %6.4f %6.4f %6.4f\n", name,
                    j.at("auc_micro").get<double>(), j.at("p_at_1").get<double>(),
                    j.at("p_at_2").get<double>(), j.at("p_at_3").get<double>());
      out << line;
    };
    row("model", m);
    row("history", m.at("history"));
    row("frequency", m.at("frequency"));
    if (m.contains("follow_rule")) {
      const nlohmann::json& f = m.at("follow_rule");
      auto num = [&](const char* k) { return f.at(k).is_number() ? f.at(k).get<double>() : NAN; };
      std::snprintf(line, sizeof line,
                    "  follow rule (%lld pairs, %lld due): AUC of the follows diagnosis: model "
                    "%.4f, history %.4f, oracle %.4f\n",
                    (long long)f.at("pairs").get<int64_t>(), (long long)f.at("due").get<int64_t>(),
                    num("auc_macro"), num("history_auc_macro"), num("oracle_auc_macro"));
      out << line;
    }
    out << selected_line(m);
    return out.str();
  }

  // Model selection on validation: micro AUC, or (select_on follow_auc, ehr-gen data) the follow
  // rule's AUC, where the question is whether the rule is learned: the other diagnoses are drawn
  // independently of the past, so micro AUC falls as a model overfits them while the rule is
  // still being learned.
  std::optional<double> selection_score(const Predictor& predict, int64_t batch_size,
                                        DType dtype) override {
    const nlohmann::json score = epoch_scores(predict, batch_size, dtype).at(selection_metric());
    return score.is_number() ? std::optional<double>(score.get<double>()) : std::nullopt;
  }
  std::string selection_metric() const override {
    return select_on_follow_ ? "valid_follow_auc" : "valid_auc_micro";
  }
  // The epoch's line: validation micro AUC and, with follow pairs, the follow rule's AUC (a log
  // shows when, if ever, the rule is learned).
  nlohmann::json epoch_scores(const Predictor& predict, int64_t batch_size, DType dtype) override {
    const Scored s = score(predict, data_.valid, batch_size, dtype);
    nlohmann::json line = {
        {"valid_auc_micro", progression_metrics(s.labels, s.probs).at("auc_micro")}};
    if (!follow_.empty()) line["valid_follow_auc"] = follow_metrics(s).at("auc_macro");
    return line;
  }

  // ---- inspection: the test patients' steps in order (patient by patient), each as a batch of
  // one; the patient's earlier steps are its context, so a carried memory is what evaluation had.
  int64_t test_examples() const override { return count_steps(data_.test); }
  void test_example(int64_t index, DType dtype, Batch& batch) override {
    shown_ = test_step(index);
    fill_one(shown_.first, shown_.second, dtype, batch);
  }
  int64_t test_example_context(int64_t index) const override { return test_step(index).second; }
  void test_example_context_batch(int64_t index, int64_t k, DType dtype, Batch& batch) override {
    const auto [patient, step] = test_step(index);
    MG_CHECK(k >= 0 && k < step, "mimic-progression: test sample ", index, " has ", step,
             " earlier steps, not ", k + 1);
    fill_one(patient, k, dtype, batch);
  }
  // The admission's codes by name, the next admission's label diagnoses, and the model's and the
  // history baseline's five highest-scored diagnoses.
  Lines describe_example(const Batch& batch, const Tensor& predictions) const override {
    const int64_t v = data_.labels();
    MG_CHECK(
        batch.size == 1 && predictions.rank() == 2 && predictions.dim(1) == v && shown_.first >= 0,
        "mimic-progression: predictions of shape ", predictions.shape(), " for a batch of ",
        batch.size, " with ", v, " diagnoses (a test_example first)");
    const mimic::ProgressionPatient& patient = data_.test[size_t(shown_.first)];
    const int64_t k = shown_.second;
    const mimic::ProgressionStep& step = patient.steps[size_t(k)];
    Lines lines;
    lines.emplace_back("patient", "subject " + std::to_string(patient.subject) + ", admission " +
                                      std::to_string(k + 1) + " of " +
                                      std::to_string(patient.steps.size() + 1) + " (test patient " +
                                      std::to_string(shown_.first) + ")");
    auto names = [](const std::vector<int32_t>& tokens, auto&& name) {
      std::string list;
      for (int32_t t : tokens) list += (list.empty() ? "" : ", ") + (t >= 2 ? name(t) : "<unseen>");
      return list.empty() ? std::string("(none)") : list;
    };
    lines.emplace_back("diagnoses", names(step.dx, [&](int32_t t) {
                         return data_.dx_units[size_t(data_.dx_vocab[size_t(t - 2)])];
                       }));
    lines.emplace_back("procedures", names(step.proc, [&](int32_t t) {
                         return data_.ehr.proc_codes[size_t(data_.proc_vocab[size_t(t - 2)])];
                       }));
    std::string truth;
    for (int32_t j : step.labels) truth += (truth.empty() ? "" : ", ") + data_.label_name(j);
    lines.emplace_back("next admission",
                       truth.empty() ? "(no label diagnosis: not scored)" : truth);
    // The history baseline's score, as evaluation gives it at this step (admissions 1..a).
    std::vector<double> seen(static_cast<size_t>(v), 0.0), history(static_cast<size_t>(v));
    for (int64_t i = 0; i <= k; ++i)
      for (int32_t j : patient.steps[size_t(i)].dx_labels) seen[size_t(j)] += 1;
    for (int64_t j = 0; j < v; ++j)
      history[size_t(j)] = history_score(seen[size_t(j)], data_.label_frequency[size_t(j)]);
    auto top = [&](const std::vector<double>& score, bool probability) {
      const std::vector<int> best = metrics::top_k(score, 5);
      std::string list;
      char value[32];
      for (size_t i = 0; i < best.size(); ++i) {
        const int32_t j = best[i];
        std::snprintf(value, sizeof value, probability ? " %.3f" : " %g", score[size_t(j)]);
        const bool hit = std::binary_search(step.labels.begin(), step.labels.end(), j);
        list += (i ? ", " : "") + data_.label_name(j) + value + (hit ? " (true)" : "");
      }
      return list;
    };
    std::vector<double> p(static_cast<size_t>(v));
    for (int64_t j = 0; j < v; ++j) p[size_t(j)] = sigmoid(predictions.at(j));
    lines.emplace_back("top 5 (model)", top(p, true));
    lines.emplace_back("top 5 (history)", top(history, false));
    return lines;
  }

 private:
  struct Scored {
    metrics::LabelMatrix labels;
    metrics::ScoreMatrix probs, history, frequency;
    std::vector<std::vector<int32_t>> before;  // per scored step: admission a-1's label diagnoses
  };

  // The generator's follow pairs (rules.json) as label indices (trigger, follows); pairs whose
  // codes are not both labels (e.g. with categories) are left out.
  std::vector<std::pair<int32_t, int32_t>> follow_labels(
      const std::vector<ehr_synth::FollowPair>& pairs) const {
    std::map<std::string, int32_t> label;
    for (int32_t j = 0; j < int32_t(data_.labels()); ++j) label[data_.label_name(j)] = j;
    std::vector<std::pair<int32_t, int32_t>> out;
    for (const ehr_synth::FollowPair& p : pairs)
      if (label.count(p.trigger) && label.count(p.follows))
        out.emplace_back(label[p.trigger], label[p.follows]);
    return out;
  }

  // The planted rule "trigger in admission a-2 gives follows in admission a": at the step whose
  // input is admission a-1, how well each follows diagnosis B is ranked over the scored test
  // steps (AUC of B's score against B being in the next admission), averaged over the pairs; the
  // oracle scores B by whether the trigger was in the admission before the input one, which is
  // what a model must remember across an admission to predict it.
  nlohmann::json follow_metrics(const Scored& s) const {
    double model = 0, history = 0, oracle = 0;
    int64_t pairs = 0, due = 0;
    std::vector<int> y(s.labels.size());
    std::vector<double> pm(y.size()), ph(y.size()), po(y.size());
    for (const auto& [a, b] : follow_) {
      for (size_t i = 0; i < y.size(); ++i) {
        y[i] = s.labels[i][size_t(b)];
        pm[i] = s.probs[i][size_t(b)];
        ph[i] = s.history[i][size_t(b)];
        const auto& before = s.before[i];
        po[i] = std::find(before.begin(), before.end(), a) != before.end() ? 1 : 0;
        due += int64_t(po[i]);
      }
      const std::optional<double> am = metrics::auc_roc(y, pm), ah = metrics::auc_roc(y, ph),
                                  ao = metrics::auc_roc(y, po);
      if (!am || !ao) continue;  // B never (or always) in a next admission of the test steps
      model += *am, history += ah.value_or(0.5), oracle += *ao, ++pairs;
    }
    auto mean = [&](double x) { return pairs ? nlohmann::json(x / double(pairs)) : nullptr; };
    return {{"pairs", pairs},
            {"due", due},
            {"auc_macro", mean(model)},
            {"history_auc_macro", mean(history)},
            {"oracle_auc_macro", mean(oracle)},
            {"definition",
             "the data's follow pairs (rules.json: trigger in admission a-2 gives follows in "
             "admission a): per pair, the AUC-ROC of the follows diagnosis's score over the scored "
             "test steps (input admission a-1, label: follows in admission a), averaged over the "
             "pairs whose follows diagnosis is a label seen both present and absent; due: the "
             "(step, pair) cases whose trigger is in admission a-2; oracle: the score 1 when due, "
             "else 0"}};
  }

  // Evaluation groups of `split`'s patients: longest first, ties by index.
  std::vector<PatientLockstep::Group> eval_groups(
      const std::vector<mimic::ProgressionPatient>& split, int64_t batch_size) const {
    const int which = &split == &data_.train ? 0 : &split == &data_.valid ? 1 : 2;
    return PatientLockstep::eval_groups(lengths_[size_t(which)], std::max<int64_t>(1, batch_size));
  }

  // The model's probabilities and both baselines' scores on every scored step of `split`, the
  // patients of a group stepped in order (a persistent memory sees each patient's history).
  Scored score(const Predictor& predict, const std::vector<mimic::ProgressionPatient>& split,
               int64_t batch_size, DType dtype) const {
    Scored s;
    const int64_t v = data_.labels();
    Batch batch;
    for (const PatientLockstep::Group& g : eval_groups(split, batch_size)) {
      std::vector<std::vector<double>> seen(g.rows.size(), std::vector<double>(size_t(v)));
      std::vector<std::vector<int32_t>> previous(g.rows.size());  // the last step's dx_labels
      for (int64_t k = 0; k < g.steps; ++k) {
        mimic::fill_step(data_, split, g.rows, k, batch_size, dtype, batch);
        const Tensor scores = predict(batch);
        MG_CHECK(scores.rank() == 2 && scores.dim(0) == batch.size && scores.dim(1) == v,
                 "mimic-progression: predictions of shape ", scores.shape(), " for ", batch.size,
                 " patients and ", v, " diagnoses (a model with output \"set\")");
        for (size_t r = 0; r < g.rows.size(); ++r) {
          const auto& steps = split[size_t(g.rows[r])].steps;
          if (k >= int64_t(steps.size())) continue;
          const mimic::ProgressionStep& step = steps[size_t(k)];
          for (int32_t j : step.dx_labels) seen[r][size_t(j)] += 1;
          std::vector<int32_t> before = std::move(previous[r]);
          previous[r] = step.dx_labels;
          if (step.labels.empty()) continue;
          std::vector<int> y(size_t(v), 0);
          for (int32_t j : step.labels) y[size_t(j)] = 1;
          std::vector<double> p(static_cast<size_t>(v)), h(static_cast<size_t>(v));
          for (int64_t j = 0; j < v; ++j) {
            const double logit = scores.at(int64_t(r) * v + j);
            MG_CHECK(std::isfinite(logit), "mimic-progression: the model's score for diagnosis ",
                     data_.label_name(int32_t(j)), " is not finite (", logit, ")");
            p[size_t(j)] = sigmoid(logit);
            h[size_t(j)] = history_score(seen[r][size_t(j)], data_.label_frequency[size_t(j)]);
          }
          s.labels.push_back(std::move(y));
          s.probs.push_back(std::move(p));
          s.history.push_back(std::move(h));
          s.frequency.push_back(data_.label_frequency);
          s.before.push_back(std::move(before));
        }
      }
    }
    MG_CHECK(!s.labels.empty(), "mimic-progression: no scored step in the split (", split.size(),
             " patients)");
    return s;
  }

  // Test step `index` (over the test patients' steps in order) as (patient, step).
  std::pair<int64_t, int64_t> test_step(int64_t index) const {
    MG_CHECK(index >= 0 && index < count_steps(data_.test), "mimic-progression: test sample ",
             index, " out of range (", count_steps(data_.test), " steps)");
    int64_t p = 0;
    while (index >= int64_t(data_.test[size_t(p)].steps.size()))
      index -= int64_t(data_.test[size_t(p++)].steps.size());
    return {p, index};
  }
  void fill_one(int64_t patient, int64_t k, DType dtype, Batch& batch) const {
    const int64_t rows[1] = {patient};
    mimic::fill_step(data_, data_.test, rows, k, 1, dtype, batch);
  }

  static int64_t count_steps(const std::vector<mimic::ProgressionPatient>& split) {
    int64_t n = 0;
    for (const auto& p : split) n += int64_t(p.steps.size());
    return n;
  }

  nlohmann::json data_summary() const {
    const mimic::Ehr& e = data_.ehr;
    return {{"data_dir", e.data_dir},
            {"layout", e.layout == mimic::Layout::mimic3 ? "MIMIC-III" : "MIMIC-IV"},
            {"patients", e.patients.size()},
            {"admissions", e.admissions.size()},
            {"eligible_patients", data_.eligible_patients},
            {"split_patients", {data_.train.size(), data_.valid.size(), data_.test.size()}},
            {"split_steps",
             {count_steps(data_.train), count_steps(data_.valid), count_steps(data_.test)}},
            {"unscored_steps", {data_.unscored[0], data_.unscored[1], data_.unscored[2]}},
            {"categories", data_.options.categories},
            {"icd9_to_10", data_.options.icd9_to_10},
            {"icd9_mapped", data_.icd9_mapped},
            {"icd9_unmapped", data_.icd9_unmapped},
            {"dx_vocab", data_.dx_vocab.size()},
            {"proc_vocab", data_.proc_vocab.size()},
            {"labels", data_.labels()},
            {"quirks", e.quirks.summary()}};
  }

  void report_load() const {
    const mimic::Ehr& e = data_.ehr;
    std::ostringstream out;
    out << "mimic-progression: " << e.data_dir << " ("
        << (e.layout == mimic::Layout::mimic3 ? "MIMIC-III" : "MIMIC-IV")
        << "): " << e.patients.size() << " patients, " << e.admissions.size() << " admissions, "
        << data_.eligible_patients
        << " patients with two or more admissions with diagnoses; read in " << e.seconds << " s\n"
        << "mimic-progression: patients train " << data_.train.size() << " / valid "
        << data_.valid.size() << " / test " << data_.test.size() << "; steps "
        << count_steps(data_.train) << " / " << count_steps(data_.valid) << " / "
        << count_steps(data_.test) << " (not scored, no label diagnosis next: " << data_.unscored[0]
        << " / " << data_.unscored[1] << " / " << data_.unscored[2]
        << "); vocabularies: " << data_.dx_vocab.size() << " diagnosis "
        << (data_.options.categories ? "categories" : "codes") << ", " << data_.proc_vocab.size()
        << " procedure codes, " << data_.labels() << " label diagnoses";
    if (!data_.options.icd9_to_10.empty())
      out << "; ICD-9 codes mapped to ICD-10: " << data_.icd9_mapped
          << " (not in the table, kept: " << data_.icd9_unmapped << ")";
    out << "\n"
        << "mimic-progression: quirks: " << e.quirks.summary();
    std::cerr << out.str();
  }

  nlohmann::json settings_;
  mimic::ProgressionData data_;
  std::vector<std::pair<int32_t, int32_t>> follow_;  // follow_labels of the data's rules.json
  bool select_on_follow_ = false;
  uint64_t seed_ = 1;
  // Per split (train, valid, test) each patient's number of steps, and the training epochs'
  // lock-step order.
  std::array<std::vector<int64_t>, 3> lengths_;
  mutable PatientLockstep lockstep_;
  std::pair<int64_t, int64_t> shown_{-1, 0};  // the last test_example()'s (patient, step)
};

const bool kRegistered = [] {
  register_task(
      {.name = "mimic-progression",
       .summary = "disease progression: a patient's admissions in order, the next admission's "
                  "diagnoses from the current one's diagnoses and procedures (DMNC paper, section "
                  "4.3), read from MIMIC-III or MIMIC-IV tables in data_dir; rows are patients",
       .create = [](const nlohmann::json& s) { return std::make_unique<MimicProgressionTask>(s); },
       .default_settings = kDefaults});
  return true;
}();

}  // namespace
}  // namespace memgrad
