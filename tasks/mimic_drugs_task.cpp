// The `mimic-drugs` task (DMNC paper, section 4.2, Table 3): an admission's diagnoses and
// procedures in, its drugs out as a set (data in mimic_drugs.hpp). Training batches are the
// training admissions in a fresh seeded order every epoch; evaluation scores the test admissions
// with AUC (macro and micro), F1 and P@1/2/5, next to the drug-popularity baseline on the same
// split; model selection keeps the epoch of best validation micro AUC.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <unordered_map>

#include "engine/error.hpp"
#include "engine/json_text.hpp"
#include "tasks/ehr_synth.hpp"
#include "tasks/epoch_order.hpp"
#include "tasks/metrics.hpp"
#include "tasks/mimic_drugs.hpp"
#include "tasks/patient_lockstep.hpp"
#include "tasks/task.hpp"

namespace memgrad {
namespace {

const nlohmann::json kDefaults = {{"data_dir", "../shared/data/mimic-iii-demo"},
                                  {"drug_column", "formulary_drug_cd"},
                                  {"top_drugs", 300},
                                  {"split_seed", 1},
                                  {"patient_rows", false},
                                  {"select_on", "auc_micro"},
                                  {"seed", 1}};

// The validation metrics an epoch can be kept by (`select_on`).
constexpr const char* kSelectable[] = {"auc_micro", "auc_macro", "f1"};

constexpr uint64_t kOrderSalt = 0x9e7a'0019'0000'0002ULL;
constexpr int kTopK[] = {1, 2, 5};
constexpr int64_t kCaseTop = 5;  // the paper's Table 4 lists each model's top 5 drugs

int64_t whole(const nlohmann::json& s, const char* key, int64_t lo, int64_t hi) {
  const nlohmann::json& v = s.at(key);
  MG_CHECK(v.is_number_integer() && v.get<int64_t>() >= lo && v.get<int64_t>() <= hi,
           "mimic-drugs: ", key, " must be a whole number in [", lo, ", ", hi, "], got ",
           dump_json(v));
  return v.get<int64_t>();
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// Appends `word` to a space-separated list (appending piece by piece: g++ 12 warns falsely,
// -Wrestrict, on "" + std::string).
void append_word(std::string& list, const std::string& word) {
  if (!list.empty()) list += ' ';
  list += word;
}

// The task's metrics of probabilities `p` against `labels` (one row per admission):
//   auc_macro / auc_micro  AUC-ROC per label averaged over labels with a positive and a negative
//                          in the split / over all (admission, label) pairs;
//   f1                     macro-averaged F1 (the paper: "AUC and F1 scores, both of which are
//                          macro-averaged"): each admission predicted to have its |Y| highest-
//                          scored drugs (the DMNC authors' decision rule, which uses the true
//                          count |Y|), F1 per label over the admissions, averaged over the labels
//                          that are true or predicted somewhere in the split (F1 is undefined for
//                          the others);
//   f1_micro_p05, f1_macro_p05  F1 at probability 0.5, over all pairs / averaged over all labels;
//   p_at_k                 share of the k highest-scored drugs that are true, averaged.
nlohmann::json drug_metrics(const metrics::LabelMatrix& labels, const metrics::ScoreMatrix& p) {
  const metrics::MultiLabelReport r =
      metrics::evaluate_multilabel(labels, p, 0.5, {std::begin(kTopK), std::end(kTopK)});
  const size_t n = labels.size(), v = labels.empty() ? 0 : labels[0].size();
  std::vector<metrics::Counts> per_label(v);
  for (size_t i = 0; i < n; ++i) {
    int truth = 0;
    for (int y : labels[i]) truth += y;
    std::vector<uint8_t> predicted(v, 0);
    if (truth > 0)
      for (int j : metrics::top_k(p[i], truth)) predicted[size_t(j)] = 1;
    for (size_t j = 0; j < v; ++j) {
      metrics::Counts& c = per_label[j];
      if (predicted[j])
        (labels[i][j] ? c.tp : c.fp) += 1;
      else
        (labels[i][j] ? c.fn : c.tn) += 1;
    }
  }
  double f1_sum = 0;
  int64_t f1_labels = 0;
  for (const metrics::Counts& c : per_label)
    if (c.tp + c.fp + c.fn > 0) f1_sum += metrics::f1(c), ++f1_labels;
  nlohmann::json m = {{"auc_macro", r.auc_macro.value_or(NAN)},
                      {"auc_micro", r.auc_micro.value_or(NAN)},
                      {"auc_labels", r.labels - r.auc_skipped_labels.size()},
                      {"f1", f1_labels > 0 ? f1_sum / double(f1_labels) : NAN},
                      {"f1_labels", f1_labels},
                      {"f1_micro_p05", r.f1_micro},
                      {"f1_macro_p05", r.f1_macro},
                      {"admissions", n}};
  for (const metrics::AtK& a : r.at_k) m["p_at_" + std::to_string(a.k)] = a.precision.value_or(NAN);
  return m;
}

class MimicDrugsTask : public Task {
 public:
  explicit MimicDrugsTask(const nlohmann::json& user)
      : settings_(merge_task_settings("mimic-drugs", kDefaults, user)) {
    mimic::DrugOptions o;
    try {
      o.load.data_dir = settings_.at("data_dir").get<std::string>();
      o.load.drug_column = settings_.at("drug_column").get<std::string>();
      o.top_drugs = whole(settings_, "top_drugs", 1, 1000000);
      o.split_seed = uint64_t(whole(settings_, "split_seed", 0, INT64_MAX));
      seed_ = uint64_t(whole(settings_, "seed", 0, INT64_MAX));
      patient_rows_ = settings_.at("patient_rows").get<bool>();
      select_on_ = settings_.at("select_on").get<std::string>();
    } catch (const nlohmann::json::exception& e) {
      fail("mimic-drugs: bad setting type (", e.what(), ")");
    }
    MG_CHECK(std::find(std::begin(kSelectable), std::end(kSelectable), select_on_) !=
                 std::end(kSelectable),
             "mimic-drugs: select_on (--select-on) must be auc_micro, auc_macro or f1, got '",
             select_on_, "'");
    data_ = mimic::make_drug_data(o);
    const std::vector<mimic::DrugSample>* splits[3] = {&data_.train, &data_.valid, &data_.test};
    for (int s = 0; s < 3 && patient_rows_; ++s) {
      by_patient_[size_t(s)] = mimic::samples_by_patient(data_, *splits[s]);
      for (const auto& p : by_patient_[size_t(s)]) lengths_[size_t(s)].push_back(int64_t(p.size()));
    }
    for (const ehr_synth::DrugRuleType& r : ehr_synth::read_drug_rules(o.load.data_dir))
      rule_types_[r.drug] = r.type;
    report_load();
  }

  std::string name() const override { return "mimic-drugs"; }
  nlohmann::json config() const override { return settings_; }
  nlohmann::json model_dims() const override {
    return {{"input_vocab", data_.dx_tokens()},
            {"input_vocab2", data_.proc_tokens()},
            {"output_vocab", data_.labels()},
            {"output", "set"}};
  }
  // patient_rows: batch rows are patients, stepped admission by admission (PatientLockstep), so
  // that a model's persistent memory carries a patient's earlier admissions (the synthetic EHR's
  // history drugs need them); else rows are admissions.
  bool rows_are_patients() const override { return patient_rows_; }
  int64_t steps_per_epoch(int64_t batch_size) const override {
    if (patient_rows_)
      return lockstep_.steps_per_epoch(lengths_[0], std::max<int64_t>(1, batch_size));
    return std::max<int64_t>(1, int64_t(data_.train.size()) / std::max<int64_t>(1, batch_size));
  }
  // Epoch e visits the training admissions in a permutation drawn from (seed, e) (EpochOrder).
  void train_batch(int64_t step, int64_t batch_size, DType dtype, Batch& batch) override {
    if (patient_rows_) {
      const auto [rows, k] =
          lockstep_.train_step(lengths_[0], seed_ ^ kOrderSalt, step, batch_size);
      return mimic::fill_patient_step(data_, data_.train, by_patient_[0], rows, k, batch_size,
                                      dtype, batch);
    }
    MG_CHECK(batch_size >= 1 && batch_size <= int64_t(data_.train.size()),
             "mimic-drugs: batch size must be in [1, ", data_.train.size(),
             "] (the training admissions), got ", batch_size);
    if (all_train_.size() != data_.train.size()) {
      all_train_.resize(data_.train.size());
      for (size_t i = 0; i < all_train_.size(); ++i) all_train_[i] = int64_t(i);
    }
    mimic::fill_batch(
        data_, data_.train,
        order_.batch(all_train_, seed_ ^ kOrderSalt, step, batch_size, steps_per_epoch(batch_size)),
        dtype, batch);
  }
  void largest_train_batch(int64_t batch_size, DType dtype, Batch& batch) override {
    mimic::largest_batch(data_, batch_size, dtype, batch);
    if (!patient_rows_) return;
    Tensor& scored = batch.field("labels_mask", Shape{batch_size}, dtype);  // every row scored,
    for (int64_t r = 0; r < batch_size; ++r) scored.set(r, 1);  // continuing its patient
    batch.field("patient_start", Shape{batch_size}, dtype);
  }
  int64_t validation_batches(int64_t batch_size) const override {
    if (patient_rows_)
      return PatientLockstep::total_steps(PatientLockstep::eval_groups(lengths_[1], batch_size));
    return (int64_t(data_.valid.size()) + batch_size - 1) / batch_size;
  }
  void validation_batch(int64_t index, int64_t batch_size, DType dtype, Batch& batch) override {
    if (patient_rows_) {
      for (const PatientLockstep::Group& g :
           PatientLockstep::eval_groups(lengths_[1], batch_size)) {
        if (index < g.steps)
          return mimic::fill_patient_step(data_, data_.valid, by_patient_[1], g.rows, index,
                                          batch_size, dtype, batch);
        index -= g.steps;
      }
      fail("mimic-drugs: validation batch out of range");
    }
    fill_range(data_.valid, index * batch_size, batch_size, dtype, batch);
  }

  nlohmann::json evaluate(const Predictor& predict, int64_t batch_size, DType dtype) override {
    const Scored s = score(predict, data_.test, batch_size, dtype);
    nlohmann::json m = drug_metrics(s.labels, s.probs);
    const metrics::ScoreMatrix pop = popularity(s.labels.size());
    m["popularity"] = drug_metrics(s.labels, pop);
    if (!rule_types_.empty()) {  // ehr-gen data: the drugs of each planted rule type
      m["rule_auc_macro"] = by_rule_type(s.labels, s.probs);
      m["popularity"]["rule_auc_macro"] = by_rule_type(s.labels, pop);
    }
    m["data"] = data_summary();
    m["definition"] =
        "test admissions (split by patient, split_seed); auc_macro: AUC-ROC per drug averaged "
        "over the auc_labels drugs with a positive and a negative among them; auc_micro: over all "
        "(admission, drug) pairs; f1: macro-averaged F1 (as the paper) of the prediction 'each "
        "admission has its |Y| highest-scored drugs' (the DMNC authors' rule), over the f1_labels "
        "drugs true or predicted somewhere; f1_micro_p05 / f1_macro_p05: F1 at probability 0.5; "
        "p_at_k: share of the k highest-scored drugs that are true, averaged "
        "over admissions; popularity: every admission scored by the drugs' training frequency; "
        "rule_auc_macro (data of memgrad ehr-gen): auc_macro over the label drugs of each rule "
        "type of its rules.json (dx, proc, and: both views, priority, history: earlier "
        "admissions, base: no inputs, either: a diagnosis or a procedure of the rule but not both)";
    return m;
  }

  std::string format_metrics(const nlohmann::json& m) const override {
    std::ostringstream out;
    out << "mimic-drugs: " << m.at("admissions").get<int64_t>() << " test admissions, "
        << data_.labels() << " drugs\n"
        << "  scores       AUC-macro AUC-micro    F1     P@1    P@2    P@5\n";
    char line[160];
    auto row = [&](const char* name, const nlohmann::json& j) {
      std::snprintf(line, sizeof line, "  %-11s  %9.4f %9.4f %6.4f %6.4f %6.4f %6.4f\n", name,
                    j.at("auc_macro").get<double>(), j.at("auc_micro").get<double>(),
                    j.at("f1").get<double>(), j.at("p_at_1").get<double>(),
                    j.at("p_at_2").get<double>(), j.at("p_at_5").get<double>());
      out << line;
    };
    row("model", m);
    row("popularity", m.at("popularity"));
    if (m.contains("rule_auc_macro")) {
      out << "  AUC-macro by rule type (model / popularity):";
      for (const auto& [type, auc] : m.at("rule_auc_macro").items()) {
        std::snprintf(line, sizeof line, " %s %.4f / %.4f", type.c_str(),
                      auc.is_number() ? auc.get<double>() : NAN,
                      m.at("popularity").at("rule_auc_macro").at(type).is_number()
                          ? m.at("popularity").at("rule_auc_macro").at(type).get<double>()
                          : NAN);
        out << line;
      }
      out << "\n";
    }
    if (m.contains("selected"))
      out << "  parameters of epoch " << m["selected"].value("epoch", 0) << " (best "
          << m["selected"].value("metric", "") << " " << m["selected"].value("value", 0.0) << ")\n";
    return out.str();
  }

  std::optional<double> selection_score(const Predictor& predict, int64_t batch_size,
                                        DType dtype) override {
    const Scored s = score(predict, data_.valid, batch_size, dtype);
    return drug_metrics(s.labels, s.probs).at(select_on_).get<double>();
  }
  std::string selection_metric() const override { return "valid_" + select_on_; }

  // ---- inspection: test admissions by index
  int64_t test_examples() const override { return int64_t(data_.test.size()); }
  void test_example(int64_t index, DType dtype, Batch& batch) override {
    MG_CHECK(index >= 0 && index < test_examples(), "mimic-drugs: test admission ", index,
             " out of range (", test_examples(), " admissions)");
    fill_range(data_.test, index, 1, dtype, batch);
    shown_ = index;
  }
  // The admission as the paper's Table 4 shows it, one line per code and drug so that a figure
  // (tools/figures/dmnc.cpp) can name each: "diagnosis k" / "procedure k" is "CODE (TITLE)" with
  // the title from D_ICD_DIAGNOSES / D_ICD_PROCEDURES when data_dir has them (else the bare code,
  // the "diagnoses" / "procedures" line saying so); drugs are "NAME (CODE)", the name being
  // PRESCRIPTIONS' DRUG on most of the code's rows; "top k" is "PROBABILITY  DRUG[  (true)]".
  // A code that no training admission has (the model reads token 1 for it) is "<unseen>", or,
  // when the batch is the last test_example(), that admission's code followed by
  // " [unseen in training]". The dictionaries and names are read at the first call.
  Lines describe_example(const Batch& batch, const Tensor& predictions) const override {
    read_names();
    const int64_t v = data_.labels();
    MG_CHECK(batch.size == 1 && predictions.rank() == 2 && predictions.dim(1) == v,
             "mimic-drugs: predictions of shape ", predictions.shape(), " for a batch of ",
             batch.size, " with ", v, " drugs");
    Lines lines;
    const mimic::Admission* admission = shown_admission(batch);
    auto view = [&](const char* name, bool dx) {
      const Tensor& x = batch.get(name);
      const Tensor& mask = batch.get(std::string(name) + "_mask");
      const std::vector<std::string>& ehr_codes = dx ? data_.ehr.dx_codes : data_.ehr.proc_codes;
      const auto& titles = dx ? titles_[0] : titles_[1];
      const char* table = dx ? "D_ICD_DIAGNOSES" : "D_ICD_PROCEDURES";
      Lines codes;
      for (int64_t i = 0; i < x.dim(1); ++i)
        if (mask.at(i) != 0) {
          const int32_t t = int32_t(x.at(i));
          const bool unseen = t == 1 && admission;
          std::string code =
              unseen ? ehr_codes[size_t((dx ? admission->dx : admission->proc)[codes.size()])]
              : dx   ? data_.dx_name(t)
                     : data_.proc_name(t);
          const auto it = titles.find(code);
          if (it != titles.end()) code += " (" + it->second + ")";
          if (unseen) code += " [unseen in training]";
          codes.emplace_back(
              std::string(dx ? "diagnosis " : "procedure ") + std::to_string(codes.size() + 1),
              std::move(code));
        }
      lines.emplace_back(dx ? "diagnoses" : "procedures",
                         std::to_string(codes.size()) + (codes.size() == 1 ? " code" : " codes") +
                             " in SEQ_NUM order, " +
                             (titles.empty() ? std::string("shown bare (no ") + table +
                                                   " table in " + data_.ehr.data_dir + ")"
                                             : std::string("titles from ") + table));
      lines.insert(lines.end(), codes.begin(), codes.end());
    };
    view("x1", true);
    view("x2", false);
    const Tensor& labels = batch.get("labels");
    std::vector<double> scores = predictions.to_vector();
    std::string truth, top;
    int64_t count = 0;
    for (int64_t j = 0; j < v; ++j)
      if (labels.at(j) != 0) {
        if (!truth.empty()) truth += "; ";
        truth += drug_named(j);
        ++count;
      }
    int64_t hits = 0;
    for (int j : metrics::top_k(scores, int(std::max<int64_t>(count, 1)))) {
      const bool hit = labels.at(j) != 0;
      hits += hit;
      append_word(top, drug(j));
      if (hit) top += '*';
    }
    lines.emplace_back("drugs", truth);
    lines.emplace_back("predicted top-|Y|", top + "   (* = true)");
    lines.emplace_back("correct", std::to_string(hits) + " of " + std::to_string(count));
    const std::vector<int> best = metrics::top_k(scores, int(std::min<int64_t>(kCaseTop, v)));
    for (size_t r = 0; r < best.size(); ++r) {
      char p[16];
      std::snprintf(p, sizeof p, "%.3f", sigmoid(scores[size_t(best[r])]));
      lines.emplace_back("top " + std::to_string(r + 1),
                         std::string(p) + "  " + drug_named(best[r]) +
                             (labels.at(best[r]) != 0 ? "  (true)" : ""));
    }
    return lines;
  }

 private:
  struct Scored {
    metrics::LabelMatrix labels;
    metrics::ScoreMatrix probs;
  };

  // Macro AUC-ROC over the label drugs of each rule type (rule_types_), null for a type none of
  // whose drugs has both a positive and a negative among the rows.
  nlohmann::json by_rule_type(const metrics::LabelMatrix& labels,
                              const metrics::ScoreMatrix& p) const {
    std::map<std::string, std::pair<double, int64_t>> sums;  // type -> (sum of AUCs, drugs)
    std::vector<int> y(labels.size());
    std::vector<double> score(labels.size());
    for (int64_t j = 0; j < data_.labels(); ++j) {
      const auto type = rule_types_.find(drug(j));
      if (type == rule_types_.end()) continue;
      for (size_t i = 0; i < labels.size(); ++i)
        y[i] = labels[i][size_t(j)], score[i] = p[i][size_t(j)];
      auto& [sum, n] = sums[type->second];
      if (const std::optional<double> auc = metrics::auc_roc(y, score)) sum += *auc, ++n;
    }
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [type, sn] : sums)
      out[type] = sn.second > 0 ? nlohmann::json(sn.first / double(sn.second)) : nlohmann::json();
    return out;
  }

  std::string drug(int64_t label) const {
    return data_.ehr.drug_codes[size_t(data_.drug_vocab[size_t(label)])];
  }
  // "Docusate Sodium (DOCU100L)" as the paper's Table 4; the code alone when it has no name (or
  // is the name: --drug-column drug).
  std::string drug_named(int64_t label) const {
    const std::string code = drug(label);
    const auto it = drug_names_.find(code);
    return it == drug_names_.end() || it->second == code ? code : it->second + " (" + code + ")";
  }

  // The admission of the last test_example() when `batch` holds its tokens, else nullptr.
  const mimic::Admission* shown_admission(const Batch& batch) const {
    if (shown_ < 0 || shown_ >= int64_t(data_.test.size())) return nullptr;
    const mimic::DrugSample& s = data_.test[size_t(shown_)];
    auto same = [&](const char* name, const std::vector<int32_t>& tokens) {
      const Tensor& x = batch.get(name);
      const Tensor& mask = batch.get(std::string(name) + "_mask");
      size_t n = 0;
      for (int64_t i = 0; i < x.dim(1); ++i)
        if (mask.at(i) != 0 && (n >= tokens.size() || int32_t(x.at(i)) != tokens[n++]))
          return false;
      return n == tokens.size();
    };
    const mimic::Admission& a = data_.ehr.admissions[size_t(s.admission)];
    const bool codes_match = a.dx.size() == s.dx.size() && a.proc.size() == s.proc.size();
    return codes_match && same("x1", s.dx) && same("x2", s.proc) ? &a : nullptr;
  }

  // The code dictionaries and the label drugs' names, read once for describe_example.
  void read_names() const {
    if (names_read_) return;
    titles_[0] = mimic::read_titles(data_.ehr.data_dir, data_.ehr.layout, "D_ICD_DIAGNOSES");
    titles_[1] = mimic::read_titles(data_.ehr.data_dir, data_.ehr.layout, "D_ICD_PROCEDURES");
    std::string column = settings_.at("drug_column").get<std::string>();
    for (char& c : column) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (column != "drug") {
      std::vector<std::string> codes;
      for (int64_t j = 0; j < data_.labels(); ++j) codes.push_back(drug(j));
      drug_names_ =
          mimic::read_drug_names(data_.ehr.data_dir, data_.ehr.layout, column, "drug", codes);
    }
    names_read_ = true;
  }

  void fill_range(const std::vector<mimic::DrugSample>& split, int64_t start, int64_t count,
                  DType dtype, Batch& batch) const {
    count = std::min<int64_t>(count, int64_t(split.size()) - start);
    MG_CHECK(start >= 0 && count >= 1, "mimic-drugs: batch at ", start, " out of range (",
             split.size(), " admissions)");
    std::vector<int64_t> which(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) which[size_t(i)] = start + i;
    mimic::fill_batch(data_, split, which, dtype, batch);
  }

  // The model's probabilities on every admission of `split` (patient_rows: stepped patient by
  // patient in lock-step groups, so that a persistent memory sees each patient's history; the
  // rows of admissions only, in the groups' order).
  Scored score(const Predictor& predict, const std::vector<mimic::DrugSample>& split,
               int64_t batch_size, DType dtype) const {
    Scored s;
    Batch batch;
    if (patient_rows_) {
      const int which = &split == &data_.train ? 0 : &split == &data_.valid ? 1 : 2;
      for (const PatientLockstep::Group& g :
           PatientLockstep::eval_groups(lengths_[size_t(which)], batch_size))
        for (int64_t k = 0; k < g.steps; ++k) {
          mimic::fill_patient_step(data_, split, by_patient_[size_t(which)], g.rows, k, batch_size,
                                   dtype, batch);
          add_scores(s, batch, predict(batch));
        }
      return s;
    }
    for (int64_t start = 0; start < int64_t(split.size()); start += batch_size) {
      fill_range(split, start, batch_size, dtype, batch);
      add_scores(s, batch, predict(batch));
    }
    return s;
  }
  // The rows of `batch` that hold an admission (labels_mask, when present), with their labels.
  void add_scores(Scored& s, const Batch& batch, const Tensor& scores) const {
    const int64_t v = data_.labels();
    MG_CHECK(scores.rank() == 2 && scores.dim(0) == batch.size && scores.dim(1) == v,
             "mimic-drugs: predictions of shape ", scores.shape(), " for ", batch.size,
             " admissions and ", v, " drugs (a model with output \"set\")");
    const Tensor& labels = batch.get("labels");
    const Tensor* scored = batch.has("labels_mask") ? &batch.get("labels_mask") : nullptr;
    for (int64_t b = 0; b < batch.size; ++b) {
      if (scored && scored->at(b) == 0) continue;  // a row without an admission at this step
      std::vector<int> y(static_cast<size_t>(v));
      std::vector<double> p(static_cast<size_t>(v));
      for (int64_t j = 0; j < v; ++j) {
        y[size_t(j)] = labels.at(b * v + j) != 0;
        const double logit = scores.at(b * v + j);
        MG_CHECK(std::isfinite(logit), "mimic-drugs: the model's score for drug ", drug(j),
                 " is not finite (", logit, ")");
        p[size_t(j)] = sigmoid(logit);
      }
      s.labels.push_back(std::move(y));
      s.probs.push_back(std::move(p));
    }
  }

  // Every admission scored by each drug's share of the training admissions that have it.
  metrics::ScoreMatrix popularity(size_t rows) const {
    std::vector<double> freq(static_cast<size_t>(data_.labels()));
    for (const mimic::DrugSample& s : data_.train)
      for (int32_t j : s.labels) freq[size_t(j)] += 1.0 / double(data_.train.size());
    return metrics::ScoreMatrix(rows, freq);
  }

  // What was read and kept, for metrics.json (the quirks as counted by the loader).
  nlohmann::json data_summary() const {
    const mimic::Ehr& e = data_.ehr;
    const mimic::Quirks& q = e.quirks;
    return {{"data_dir", e.data_dir},
            {"layout", e.layout == mimic::Layout::mimic3 ? "MIMIC-III" : "MIMIC-IV"},
            {"patients", e.patients.size()},
            {"admissions", e.admissions.size()},
            {"full_admissions", data_.full_admissions},
            {"split_patients", {data_.patients[0], data_.patients[1], data_.patients[2]}},
            {"split_admissions", {data_.train.size(), data_.valid.size(), data_.test.size()}},
            {"dropped_without_label",
             {data_.dropped_empty[0], data_.dropped_empty[1], data_.dropped_empty[2]}},
            {"dx_vocab", data_.dx_vocab.size()},
            {"proc_vocab", data_.proc_vocab.size()},
            {"drugs", e.drug_codes.size()},
            {"label_coverage", data_.label_coverage},
            {"quirks", q.summary()}};
  }

  void report_load() const {
    const mimic::Ehr& e = data_.ehr;
    std::ostringstream out;
    out << "mimic-drugs: " << e.data_dir << " ("
        << (e.layout == mimic::Layout::mimic3 ? "MIMIC-III" : "MIMIC-IV")
        << "): " << e.patients.size() << " patients, " << e.admissions.size() << " admissions, "
        << data_.full_admissions << " with diagnoses, procedures and drugs; read in " << e.seconds
        << " s\n"
        << "mimic-drugs: patients train " << data_.patients[0] << " / valid " << data_.patients[1]
        << " / test " << data_.patients[2] << "; admissions " << data_.train.size() << " / "
        << data_.valid.size() << " / " << data_.test.size()
        << " (dropped without a label drug: " << data_.dropped_empty[0] << " / "
        << data_.dropped_empty[1] << " / " << data_.dropped_empty[2]
        << "); vocabularies: " << data_.dx_vocab.size() << " diagnosis codes, "
        << data_.proc_vocab.size() << " procedure codes, " << data_.labels() << " drugs of "
        << e.drug_codes.size() << " (covering " << 100 * data_.label_coverage
        << " % of training admission-drug pairs)\n"
        << "mimic-drugs: quirks: " << e.quirks.summary();
    std::cerr << out.str();
  }

  nlohmann::json settings_;
  mimic::DrugData data_;
  uint64_t seed_ = 1;
  std::string select_on_;  // the validation metric that keeps an epoch (kSelectable)
  std::unordered_map<std::string, std::string> rule_types_;  // ehr-gen data: drug code -> rule type
  // patient_rows: per split (train, valid, test) each patient's samples in time order, and their
  // counts; the training epochs' lock-step order.
  bool patient_rows_ = false;
  std::array<std::vector<std::vector<int64_t>>, 3> by_patient_;
  std::array<std::vector<int64_t>, 3> lengths_;
  mutable PatientLockstep lockstep_;
  mutable std::unordered_map<std::string, std::string> titles_[2];   // code -> title
  mutable std::unordered_map<std::string, std::string> drug_names_;  // label drug code -> name
  mutable bool names_read_ = false;
  int64_t shown_ = -1;              // the last test_example()'s index
  std::vector<int64_t> all_train_;  // 0 .. training admissions - 1
  EpochOrder order_;
};

const bool kRegistered = [] {
  register_task(
      {.name = "mimic-drugs",
       .summary = "drug prescription from an admission's diagnosis and procedure codes (DMNC "
                  "paper, section 4.2), read from MIMIC-III or MIMIC-IV tables in data_dir",
       .create = [](const nlohmann::json& s) { return std::make_unique<MimicDrugsTask>(s); },
       .default_settings = kDefaults});
  return true;
}();

}  // namespace
}  // namespace memgrad
