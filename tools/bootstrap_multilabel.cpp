#include "tools/bootstrap_multilabel.hpp"

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

#include "engine/quote.hpp"
#include "tasks/label_scores.hpp"
#include "tasks/metrics.hpp"
#include "tasks/multilabel_bootstrap.hpp"
#include "tools/args.hpp"

namespace memgrad::cli {
namespace {

using metrics::MultiLabelMetric;

// One file's split: the notes' gold values and scores (sigmoid of the logits, as the task's
// metrics.json computes them), prepared for weighted evaluation.
struct Model {
  std::string path;
  LabelScoreSplit split;
  metrics::ScoreMatrix probs;
  std::unique_ptr<metrics::WeightedMultiLabel> weighted;
};

Model read_model(const std::string& path, const std::string& split, int k) {
  Model m{.path = path};
  std::string known;
  for (LabelScoreSplit& s : read_label_scores(path)) {
    known += (known.empty() ? "" : ", ") + s.name;
    if (s.name == split) m.split = std::move(s);
  }
  if (m.split.records.empty())
    throw UsageError(path + ": no note of split " + quote(split) + " (the file has " + known + ")");
  for (const std::vector<double>& row : m.split.scores) {
    m.probs.emplace_back();
    for (const double z : row) m.probs.back().push_back(1 / (1 + std::exp(-z)));
  }
  m.weighted = std::make_unique<metrics::WeightedMultiLabel>(m.split.gold, m.probs, k);
  return m;
}

std::string at(const Model& m, std::size_t line) { return m.path + ":" + std::to_string(line); }

// The same notes in the same order, the same labels in the same order and the same gold values,
// else a UsageError at the first difference.
void check_paired(const Model& a, const Model& b) {
  const LabelScoreSplit &x = a.split, &y = b.split;
  for (std::size_t j = 0; j < std::min(x.codes.size(), y.codes.size()); ++j)
    if (x.codes[j] != y.codes[j])
      throw UsageError(at(a, x.line(0, j)) + ": label " + quote(x.codes[j]) + " where " +
                       at(b, y.line(0, j)) + " has label " + quote(y.codes[j]) +
                       " (a paired bootstrap needs the same label set in the same order)");
  if (x.codes.size() != y.codes.size())
    throw UsageError(at(a, x.first_line[0]) + ": " + std::to_string(x.codes.size()) +
                     " labels per note, " + at(b, y.first_line[0]) + ": " +
                     std::to_string(y.codes.size()) +
                     " (a paired bootstrap needs the same labels)");
  for (std::size_t i = 0; i < std::min(x.records.size(), y.records.size()); ++i) {
    if (x.records[i] != y.records[i])
      throw UsageError(at(a, x.first_line[i]) + ": record " + quote(x.records[i]) + " where " +
                       at(b, y.first_line[i]) + " has record " + quote(y.records[i]) + " (note " +
                       std::to_string(i + 1) + " of split " + quote(x.name) +
                       "; a paired bootstrap needs the same notes in the same order)");
    for (std::size_t j = 0; j < x.codes.size(); ++j)
      if (x.gold[i][j] != y.gold[i][j])
        throw UsageError(at(a, x.line(i, j)) + ": record " + quote(x.records[i]) + " label " +
                         quote(x.codes[j]) + " has gold " + std::to_string(x.gold[i][j]) + ", " +
                         at(b, y.line(i, j)) + " gold " + std::to_string(y.gold[i][j]));
  }
  if (x.records.size() != y.records.size())
    throw UsageError(a.path + " has " + std::to_string(x.records.size()) + " notes of split " +
                     quote(x.name) + ", " + b.path + " " + std::to_string(y.records.size()));
}

std::vector<Model> read_group(const std::vector<std::string>& paths, const std::string& split,
                              int k) {
  std::vector<Model> g;
  for (const std::string& path : paths) g.push_back(read_model(path, split, k));
  return g;
}

std::vector<const metrics::WeightedMultiLabel*> weighted(const std::vector<Model>& g) {
  std::vector<const metrics::WeightedMultiLabel*> out;
  for (const Model& m : g) out.push_back(m.weighted.get());
  return out;
}

// The metric of the data (evaluate_multilabel, as metrics.json has it), mean over the group.
double mean_metric(const std::vector<Model>& g, MultiLabelMetric metric, int k) {
  double sum = 0;
  for (const Model& m : g) {
    const metrics::MultiLabelReport r =
        metrics::evaluate_multilabel(m.split.gold, m.probs, 0.5, {k});
    const std::optional<double> v = metric == MultiLabelMetric::auc_macro   ? r.auc_macro
                                    : metric == MultiLabelMetric::auc_micro ? r.auc_micro
                                                                            : r.at_k[0].precision;
    if (!v) throw UsageError(m.path + ": the metric is undefined on split " + quote(m.split.name));
    sum += *v;
  }
  return sum / double(g.size());
}

nlohmann::ordered_json group_json(const std::vector<Model>& a, const std::vector<Model>* b,
                                  const MultiLabelBootstrapRequest& r) {
  nlohmann::ordered_json j;
  if (!b) {
    j["files"] = nlohmann::json::array();
    for (const Model& m : a) j["files"].push_back(m.path);
  }
  int skipped = 0;
  const std::string p_at_k = "p_at_" + std::to_string(r.k);
  for (const auto& [name, metric] :
       {std::pair{std::string("auc_macro"), MultiLabelMetric::auc_macro},
        std::pair{std::string("auc_micro"), MultiLabelMetric::auc_micro},
        std::pair{p_at_k, MultiLabelMetric::p_at_k}}) {
    const metrics::BootstrapInterval ci = metrics::multilabel_bootstrap_interval(
        weighted(a), b ? weighted(*b) : std::vector<const metrics::WeightedMultiLabel*>{}, metric,
        r.resamples, r.seed, r.level);
    j[name] = mean_metric(a, metric, r.k) - (b ? mean_metric(*b, metric, r.k) : 0.0);
    j[name + "_ci"] = {ci.low, ci.high};
    skipped += ci.skipped;
  }
  j["skipped"] = skipped;
  return j;
}

}  // namespace

nlohmann::ordered_json multilabel_bootstrap(const MultiLabelBootstrapRequest& r) {
  if (r.k < 1) throw UsageError("--k must be >= 1, got " + std::to_string(r.k));
  nlohmann::ordered_json out;
  try {
    if (r.scores.empty()) throw UsageError("--scores FILE is required (see --help)");
    const std::vector<Model> a = read_group(r.scores, r.split, r.k);
    const std::vector<Model> b = read_group(r.versus, r.split, r.k);
    for (const Model& m : a) check_paired(a.front(), m);
    for (const Model& m : b) check_paired(a.front(), m);
    const LabelScoreSplit& first = a.front().split;
    std::size_t positives = 0, left_out = 0;
    for (const auto& row : first.gold)
      for (const int y : row) positives += std::size_t(y);
    for (std::size_t j = 0; j < first.codes.size(); ++j) {
      std::size_t pos = 0;
      for (const auto& row : first.gold) pos += std::size_t(row[j]);
      left_out += pos == 0 || pos == first.records.size();
    }
    out["split"] = r.split;
    out["notes"] = first.records.size();
    out["labels"] = first.codes.size();
    out["positives"] = positives;
    out["labels_without_both_classes"] = left_out;
    out["resamples"] = r.resamples;
    out["seed"] = r.seed;
    out["level"] = r.level;
    out["k"] = r.k;
    out["a"] = group_json(a, nullptr, r);
    if (!r.versus.empty()) {
      out["b"] = group_json(b, nullptr, r);
      out["difference"] = group_json(a, &b, r);
    }
  } catch (const metrics::DataError& e) {
    throw UsageError(e.what());
  }
  return out;
}

std::string bootstrap_group_name(const std::string& key, const nlohmann::ordered_json& m) {
  if (!m.contains("files")) return "A - B";
  if (m["files"].size() == 1) return m["files"][0].get<std::string>();
  return std::string(key == "a" ? "A" : "B") + " (mean of " + std::to_string(m["files"].size()) +
         " files)";
}

void print_multilabel_bootstrap(const nlohmann::ordered_json& j) {
  const std::string p = "p_at_" + std::to_string(j["k"].get<int>());
  std::printf(
      "split %s: %zu notes, %zu labels (%zu without both classes), %zu positives; %d resamples "
      "(seed %llu), %.3g intervals\n",
      j["split"].get<std::string>().c_str(), j["notes"].get<std::size_t>(),
      j["labels"].get<std::size_t>(), j["labels_without_both_classes"].get<std::size_t>(),
      j["positives"].get<std::size_t>(), j["resamples"].get<int>(),
      j["seed"].get<unsigned long long>(), j["level"].get<double>());
  for (const char* key : {"a", "b", "difference"}) {
    if (!j.contains(key)) continue;
    const auto& m = j[key];
    const std::string name = bootstrap_group_name(key, m);
    std::printf(
        "  %-40s AUC macro %.4f [%.4f, %.4f]  AUC micro %.4f [%.4f, %.4f]  P@%d %.4f "
        "[%.4f, %.4f]\n",
        name.c_str(), m["auc_macro"].get<double>(), m["auc_macro_ci"][0].get<double>(),
        m["auc_macro_ci"][1].get<double>(), m["auc_micro"].get<double>(),
        m["auc_micro_ci"][0].get<double>(), m["auc_micro_ci"][1].get<double>(), j["k"].get<int>(),
        m[p].get<double>(), m[p + "_ci"][0].get<double>(), m[p + "_ci"][1].get<double>());
  }
}

}  // namespace memgrad::cli
