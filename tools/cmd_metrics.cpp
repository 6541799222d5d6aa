// memgrad metrics: multi-label metrics of a label file and a score file (see --help and
// docs/metrics.md). The computations live in tasks/metrics.hpp.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/json_text.hpp"
#include "engine/quote.hpp"
#include "tasks/metrics.hpp"
#include "tools/args.hpp"
#include "tools/commands.hpp"

namespace memgrad::cli {

namespace {

constexpr const char* kHelp =
    R"(usage: memgrad metrics --labels LABELS --scores SCORES [--k 1,2,5] [--threshold 0.5]
                       [--format json|table]

       memgrad metrics bootstrap --scores FILE [--versus FILE] ...   (see its --help)

Multi-label metrics of SCORES against LABELS (definitions follow scikit-learn; docs/metrics.md).
`memgrad metrics bootstrap` gives bootstrap intervals of AUC-ROC and AUC-PR, and paired ones of
the difference between two models, from `memgrad eval --scores` files.

Input
  LABELS, SCORES  one row per sample, one column per label, same shape. CSV (comma-separated,
                  blank lines skipped), or JSONL (one JSON array of numbers per line) when the
                  name ends in .jsonl. Labels are 0 or 1, scores finite real numbers; true and
                  false are neither.
  Header          the first row is a header, and skipped, when every cell of it is a name: text
                  that is not empty, not a number and not true, false or null (in JSONL, a JSON
                  string). The same rule for both formats; any other first row is data. A
                  skipped header is reported on stderr as FILE:LINE: header row of N names
                  skipped, with the first names.
  --k LIST        comma-separated k values for P@k and R@k (default 1,2,5)
  --threshold T   a label is predicted when its score is >= T (default 0.5)
  --threads N     accepted by every memgrad tool (the metrics run on one thread)
  --format F      json (default) or table

Metrics
  auc_macro       AUC-ROC per label = Mann-Whitney U / (positives * negatives), tied scores
                  counted as half (average ranks); unweighted mean over labels that have both a
                  positive and a negative. The others are listed in auc_skipped_labels.
  auc_micro       AUC-ROC of all (sample, label) pairs flattened.
  ap_macro        average precision per label as scikit-learn's average_precision_score:
                  sum over distinct thresholds, descending, of (R_t - R_{t-1}) * P_t (step-wise,
                  no interpolation); mean over labels with at least one positive. The others are
                  listed in ap_skipped_labels.
  ap_micro        average precision of all pairs flattened.
  f1_*, precision_*, recall_*
                  at the threshold. Per label: P = tp/(tp+fp), R = tp/(tp+fn),
                  F1 = 2tp/(2tp+fp+fn), each 0 when its denominator is 0 (zero_division=0).
                  macro = unweighted mean over all labels; micro = from counts summed over labels.
  hamming_loss    fraction of (sample, label) pairs predicted wrongly at the threshold.
  p@K             |top-K scored labels ∩ true labels| / K, averaged over all samples. Equal
                  scores are ranked by label index, lower first. With K > labels the divisor is
                  still K.
  r@K             |top-K ∩ true| / |true|, averaged over samples with at least one true label.
  samples, labels the matrix shape.
  A value that is undefined (e.g. auc_micro without any positive or negative, r@K when no sample
  has a true label) is null.

Output
  json: one object with the keys above; numbers are printed so that they read back exactly.
  table: the same, aligned for reading.
  Bad input (missing or empty file, ragged rows, a cell that is not a number, NaN or infinite
  values, labels other than 0/1, files of different shapes) prints "FILE:LINE: problem" to stderr
  and exits with code 2; values from the files are quoted, escaped (\xNN for bytes outside
  printable ASCII) and cut after 60 characters.
)";

std::vector<int> parse_ks(const std::string& text) {
  std::vector<int> ks;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    char* end = nullptr;
    const long k = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || k < 1 || k > 1000000)
      throw UsageError("--k expects a comma-separated list of positive integers, got " +
                       quote(text));
    if (std::find(ks.begin(), ks.end(), static_cast<int>(k)) == ks.end())
      ks.push_back(static_cast<int>(k));
  }
  if (ks.empty() || text.back() == ',')
    throw UsageError("--k expects a comma-separated list of positive integers, got " + quote(text));
  return ks;
}

nlohmann::json value(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::ordered_json to_json(const metrics::MultiLabelReport& r) {
  nlohmann::ordered_json out;
  out["samples"] = r.samples;
  out["labels"] = r.labels;
  out["auc_macro"] = value(r.auc_macro);
  out["auc_micro"] = value(r.auc_micro);
  out["ap_macro"] = value(r.ap_macro);
  out["ap_micro"] = value(r.ap_micro);
  out["f1_macro"] = r.f1_macro;
  out["f1_micro"] = r.f1_micro;
  out["precision_macro"] = r.precision_macro;
  out["precision_micro"] = r.precision_micro;
  out["recall_macro"] = r.recall_macro;
  out["recall_micro"] = r.recall_micro;
  out["hamming_loss"] = r.hamming_loss;
  for (const metrics::AtK& at : r.at_k) out["p@" + std::to_string(at.k)] = value(at.precision);
  for (const metrics::AtK& at : r.at_k) out["r@" + std::to_string(at.k)] = value(at.recall);
  out["auc_skipped_labels"] = r.auc_skipped_labels;
  out["ap_skipped_labels"] = r.ap_skipped_labels;
  return out;
}

std::string list_text(const std::vector<int>& labels) {
  if (labels.empty()) return "none";
  std::string text;
  for (int j : labels) {
    if (!text.empty()) text += ',';
    text += std::to_string(j);
  }
  return text;
}

void print_table(const nlohmann::ordered_json& json) {
  for (const auto& [key, v] : json.items()) {
    std::string text;
    if (v.is_null()) {
      text = "undefined";
    } else if (v.is_number_float()) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.6f", v.get<double>());
      text = buf;
    } else if (v.is_array()) {
      text = list_text(v.get<std::vector<int>>());
    } else {
      text = dump_json(v);
    }
    std::printf("%-20s %s\n", key.c_str(), text.c_str());
  }
}

}  // namespace

int cmd_metrics(const Words& words) {
  if (!words.empty() && words.front() == "bootstrap")
    return cmd_metrics_bootstrap(Words(words.begin() + 1, words.end()));
  const Args args(words, {"help"}, {"labels", "scores", "k", "threshold", "format", "threads"});
  if (args.has("help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  threads_option(args);  // accepted like every tool's; the metrics themselves are serial
  if (!args.positional().empty())
    throw UsageError("unexpected argument " + quote(args.positional()[0]) + " (see --help)");
  const auto labels_path = args.get("labels");
  const auto scores_path = args.get("scores");
  if (!labels_path || !scores_path)
    throw UsageError("--labels and --scores are required (see --help)");
  const std::vector<int> ks = parse_ks(args.get("k", "1,2,5"));
  const double threshold = args.get_double("threshold", 0.5);
  const std::string format = args.get("format", "json");
  if (format != "json" && format != "table")
    throw UsageError("--format must be json or table, got " + quote(format));

  metrics::MultiLabelReport report;
  try {
    const metrics::Table labels = metrics::read_matrix_file(*labels_path);
    const metrics::Table scores = metrics::read_matrix_file(*scores_path);
    for (const metrics::Table* t : {&labels, &scores})
      if (!t->header.empty())
        std::fprintf(stderr, "memgrad metrics: %s\n", metrics::header_note(*t).c_str());
    metrics::check_same_shape(labels, scores);
    report = metrics::evaluate_multilabel(metrics::to_labels(labels), scores.rows, threshold, ks);
  } catch (const metrics::DataError& e) {
    throw UsageError(e.what());
  }

  const nlohmann::ordered_json json = to_json(report);
  if (format == "json") {
    std::printf("%s\n", dump_json(json).c_str());
  } else {
    print_table(json);
  }
  return 0;
}

}  // namespace memgrad::cli
