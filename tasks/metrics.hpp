// Evaluation metrics shared by every task: multi-label ranking and threshold metrics (AUC-ROC,
// average precision, F1/precision/recall, hamming loss, P@k, R@k), class and sequence accuracy,
// and the bAbI error summary. Plain C++ (no engine types); definitions follow scikit-learn and are
// written out in docs/metrics.md.
//
// Conventions:
// - A label matrix is one row per sample, one column per label, entries 0 or 1; a score matrix has
//   the same shape and finite entries.
// - A metric that is undefined for the given data (AUC of a label without negatives, recall@k with
//   no true labels at all, ...) is std::nullopt, never NaN.
// - Misuse (shape mismatch, labels other than 0/1, non-finite scores, k < 1) throws
//   std::invalid_argument. Bad data in files throws DataError with a "file:line: ..." message.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <istream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace memgrad::metrics {

using LabelMatrix = std::vector<std::vector<int>>;     // [sample][label], entries 0/1
using ScoreMatrix = std::vector<std::vector<double>>;  // [sample][label], finite

// ---- One label (a column): ranking metrics ------------------------------------------------------

// Area under the ROC curve = Mann-Whitney U / (positives * negatives), tied scores counted as half
// (average ranks). nullopt unless the column has at least one positive and one negative. O(n log
// n).
std::optional<double> auc_roc(const std::vector<int>& labels, const std::vector<double>& scores);

// Average precision as scikit-learn's average_precision_score: sum over distinct score thresholds
// (descending) of (R_t - R_{t-1}) * P_t, no interpolation. nullopt when there is no positive.
std::optional<double> average_precision(const std::vector<int>& labels,
                                        const std::vector<double>& scores);

// Percentile bootstrap interval of a ranking metric (auc_roc, average_precision) on one column:
// `resamples` resamples of the n samples drawn with replacement (std::mt19937_64 seeded with
// `seed`, index = draw % n: a pure function of the seed), the metric on each, and the
// (1 - level) / 2 and (1 + level) / 2 quantiles of those values (linear interpolation between
// order statistics, numpy.percentile's default). Resamples where the metric is undefined (one
// class only) are skipped and counted. Throws std::invalid_argument for resamples < 1, a level
// outside (0, 1), or when no resample is defined.
struct BootstrapInterval {
  double low = 0, high = 0;
  int used = 0, skipped = 0;
};
using RankingMetric = std::optional<double> (*)(const std::vector<int>&,
                                                const std::vector<double>&);
// The percentile interval of a statistic over `resamples` bootstrap resamples of n samples, the
// draws of bootstrap_interval: draw i of a resample is index rng() % n of a std::mt19937_64
// seeded with `seed`, drawn in order; value(indices) is the statistic on them, nullopt when
// undefined (skipped and counted). Throws as bootstrap_interval does, and for n = 0.
using ResampleStatistic = std::function<std::optional<double>(const std::vector<std::size_t>&)>;
BootstrapInterval percentile_bootstrap(std::size_t n, int resamples, std::uint64_t seed,
                                       double level, const ResampleStatistic& value);
BootstrapInterval bootstrap_interval(const std::vector<int>& labels,
                                     const std::vector<double>& scores, RankingMetric metric,
                                     int resamples = 1000, std::uint64_t seed = 1,
                                     double level = 0.95);

// Paired percentile bootstrap of the difference mean_a metric - mean_b metric between two groups
// of score columns on the same samples (a group: one model, or one model's seeds, whose metric
// is the mean over its columns): each resample (drawn exactly as bootstrap_interval draws them
// with this seed) is applied to every column, so the interval accounts for the correlation
// between the models. With `b` empty, the interval of group a's mean metric (bootstrap_interval
// is the case of one column). Identical groups give [0, 0]. Throws as bootstrap_interval does,
// for an empty `a`, and when a column's length differs from the labels'.
BootstrapInterval paired_bootstrap_interval(const std::vector<int>& labels,
                                            const std::vector<std::vector<double>>& a,
                                            const std::vector<std::vector<double>>& b,
                                            RankingMetric metric, int resamples = 1000,
                                            std::uint64_t seed = 1, double level = 0.95);

// ---- Threshold metrics: a label is predicted when its score is >= threshold ---------------------

struct Counts {
  long tp = 0, fp = 0, fn = 0, tn = 0;
  Counts& operator+=(const Counts& o);
};

Counts count_at_threshold(const std::vector<int>& labels, const std::vector<double>& scores,
                          double threshold);
// tp / (tp + fp), tp / (tp + fn), 2tp / (2tp + fp + fn); 0 when the denominator is 0
// (scikit-learn's zero_division=0).
double precision(const Counts& c);
double recall(const Counts& c);
double f1(const Counts& c);

// Fraction of (sample, label) pairs where the prediction differs from the label.
double hamming_loss(const LabelMatrix& labels, const ScoreMatrix& scores, double threshold);

// ---- Top-k metrics (per sample, over its labels) ------------------------------------------------

// Indices of the min(k, size) highest scores, highest first; equal scores are ordered by label
// index, lower first. Throws std::invalid_argument when k < 1.
std::vector<int> top_k(const std::vector<double>& scores, int k);

// P@k = |top-k ∩ true| / k averaged over all samples. With k > number of labels the divisor stays
// k (so P@k <= labels / k). nullopt only for zero samples.
std::optional<double> precision_at_k(const LabelMatrix& labels, const ScoreMatrix& scores, int k);
// R@k = |top-k ∩ true| / |true| averaged over samples with at least one true label; nullopt when
// no sample has one.
std::optional<double> recall_at_k(const LabelMatrix& labels, const ScoreMatrix& scores, int k);

// ---- Everything at once -------------------------------------------------------------------------

struct AtK {
  int k = 0;
  std::optional<double> precision;  // P@k
  std::optional<double> recall;     // R@k
};

struct MultiLabelReport {
  std::size_t samples = 0;
  std::size_t labels = 0;
  // Macro: unweighted mean over eligible labels (AUC: a positive and a negative; AP: a positive).
  // Micro: the metric over all (sample, label) pairs flattened. nullopt when undefined.
  std::optional<double> auc_macro, auc_micro, ap_macro, ap_micro;
  std::vector<int> auc_skipped_labels, ap_skipped_labels;  // labels left out of the macro means
  std::vector<std::optional<double>> auc_per_label, ap_per_label;
  // At the threshold; macro = mean of the per-label values, micro = from the summed counts.
  double f1_macro = 0, f1_micro = 0;
  double precision_macro = 0, precision_micro = 0;
  double recall_macro = 0, recall_micro = 0;
  double hamming_loss = 0;
  std::vector<double> f1_per_label;
  std::vector<AtK> at_k;  // in the order of `ks`
};

// Validates the matrices (non-empty, rectangular, same shape, 0/1 labels, finite scores; throws
// std::invalid_argument otherwise) and computes every multi-label metric.
MultiLabelReport evaluate_multilabel(const LabelMatrix& labels, const ScoreMatrix& scores,
                                     double threshold = 0.5,
                                     const std::vector<int>& ks = {1, 2, 5});

// ---- Classes and sequences ----------------------------------------------------------------------

// Index of the highest score, the lowest index among ties. Throws on an empty vector.
int argmax(const std::vector<double>& scores);

// Fraction of counted positions where predicted == target. mask[i] != 0 counts position i, 0
// ignores it (padding); an empty mask counts every position. nullopt when nothing is counted.
std::optional<double> accuracy(const std::vector<int>& predicted, const std::vector<int>& target,
                               const std::vector<std::uint8_t>& mask = {});
// Fraction of sequences whose counted positions are all correct (sequences with no counted
// position are left out); masks as above, one per sequence, or none at all.
std::optional<double> sequence_accuracy(const std::vector<std::vector<int>>& predicted,
                                        const std::vector<std::vector<int>>& target,
                                        const std::vector<std::vector<std::uint8_t>>& masks = {});

// ---- bAbI ---------------------------------------------------------------------------------------

struct TaskCount {
  long correct = 0;
  long total = 0;
};

// bAbI's pass line: a task fails at an error above this (%), as Weston et al. count it. The
// one place the tasks layer writes it (a model may not include a task: models/qa/amn_inference.hpp
// has its own copy).
constexpr double kBabiFailPercent = 5.0;

struct BabiSummary {
  std::map<int, double> task_error_percent;  // 100 * (total - correct) / total, per task id
  double mean_error = 0;                     // unweighted mean of the per-task percentages
  int failed_tasks = 0;                      // tasks with error > fail_percent
};

// Throws std::invalid_argument for no tasks, total < 1, or correct outside [0, total].
BabiSummary summarize_babi(const std::map<int, TaskCount>& counts,
                           double fail_percent = kBabiFailPercent);

// ---- Reading matrices from files ----------------------------------------------------------------

// Bad data in a file; what() is "path:line: problem" (or "path: problem" for whole-file problems).
struct DataError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Table {
  std::string path;
  std::vector<std::vector<double>> rows;  // data rows only
  std::vector<std::size_t> lines;         // 1-based line number of each row in the file
  std::vector<std::string> header;        // the header's names as written; empty without one
  std::size_t header_line = 0;            // its line; 0 without one
  std::size_t columns() const { return rows.empty() ? 0 : rows[0].size(); }
};

enum class Format { csv, jsonl };

// Reads a numeric matrix. JSONL holds one JSON array of numbers per line; CSV is comma-separated,
// surrounding spaces and double quotes of a cell ignored, no commas inside cells. Blank lines are
// skipped, and a UTF-8 byte order mark. Header rule, the same for both formats: the first row is a
// header, and skipped, when every cell of it is a name: text that is not empty, not a number (as
// strtod reads one: 1, -2e-3, inf, nan) and not true, false or null; in JSONL only a JSON string
// can be a name. Any other first row is data. Throws DataError "path:line: problem" for no data
// rows, an empty or ragged row, a cell that is not a number (true/false included), invalid JSON,
// or a value that is NaN or infinite; values from the file in messages are quote()d.
Table read_matrix(std::istream& in, const std::string& path, Format format);

// read_matrix of a file: JSONL when its name ends in ".jsonl", CSV otherwise. Throws DataError
// also for a missing, unreadable or directory path.
Table read_matrix_file(const std::string& path);

// "path:line: header row of N names skipped ('a', 'b', ...)" when the table had a header, ""
// otherwise: a header is never skipped silently.
std::string header_note(const Table& table);

// The table as 0/1 labels; throws DataError naming the line of any other value.
LabelMatrix to_labels(const Table& table);

// Throws DataError unless `scores` has the same number of rows and columns as `labels`.
void check_same_shape(const Table& labels, const Table& scores);

}  // namespace memgrad::metrics
