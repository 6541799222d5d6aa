#include "tasks/metrics.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/json_text.hpp"
#include "engine/quote.hpp"

namespace memgrad::metrics {

namespace {

void require(bool cond, const std::string& message) {
  if (!cond) throw std::invalid_argument("metrics: " + message);
}

void check_column(const std::vector<int>& labels, const std::vector<double>& scores) {
  require(labels.size() == scores.size(), "labels and scores differ in length (" +
                                              std::to_string(labels.size()) + " vs " +
                                              std::to_string(scores.size()) + ")");
  for (int y : labels) require(y == 0 || y == 1, "labels must be 0 or 1");
  for (double s : scores) require(std::isfinite(s), "scores must be finite");
}

void check_matrices(const LabelMatrix& labels, const ScoreMatrix& scores) {
  require(labels.size() == scores.size(), "labels and scores differ in number of samples (" +
                                              std::to_string(labels.size()) + " vs " +
                                              std::to_string(scores.size()) + ")");
  for (std::size_t i = 0; i < labels.size(); ++i) {
    require(labels[i].size() == labels[0].size(), "label rows differ in length");
    check_column(labels[i], scores[i]);
  }
}

std::size_t count_positives(const std::vector<int>& labels) {
  return static_cast<std::size_t>(std::count(labels.begin(), labels.end(), 1));
}

// Sample indices ordered by score, ascending or descending (ties in any order: callers group them).
std::vector<std::size_t> order_by_score(const std::vector<double>& scores, bool descending) {
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return descending ? scores[a] > scores[b] : scores[a] < scores[b];
  });
  return order;
}

// Calls visit(positives, negatives) for each group of equal scores, in the given order.
template <class Visit>
void for_each_tie_group(const std::vector<int>& labels, const std::vector<double>& scores,
                        const std::vector<std::size_t>& order, Visit visit) {
  for (std::size_t begin = 0; begin < order.size();) {
    std::size_t end = begin;
    long pos = 0, neg = 0;
    while (end < order.size() && scores[order[end]] == scores[order[begin]]) {
      (labels[order[end]] == 1 ? pos : neg) += 1;
      ++end;
    }
    visit(pos, neg);
    begin = end;
  }
}

std::optional<double> mean_of(const std::vector<std::optional<double>>& values,
                              std::vector<int>& skipped) {
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t j = 0; j < values.size(); ++j) {
    if (values[j]) {
      sum += *values[j];
      ++n;
    } else {
      skipped.push_back(static_cast<int>(j));
    }
  }
  if (n == 0) return std::nullopt;
  return sum / static_cast<double>(n);
}

double ratio(long num, long den) {
  return den == 0 ? 0.0 : static_cast<double>(num) / static_cast<double>(den);
}

}  // namespace

// ---- Ranking metrics ----------------------------------------------------------------------------

std::optional<double> auc_roc(const std::vector<int>& labels, const std::vector<double>& scores) {
  check_column(labels, scores);
  const double positives = static_cast<double>(count_positives(labels));
  const double negatives = static_cast<double>(labels.size()) - positives;
  if (positives == 0 || negatives == 0) return std::nullopt;
  // Each positive scores 1 per negative strictly below it and 1/2 per negative tied with it.
  double wins = 0;
  long negatives_below = 0;
  for_each_tie_group(labels, scores, order_by_score(scores, false), [&](long pos, long neg) {
    wins += static_cast<double>(pos) * (static_cast<double>(negatives_below) + 0.5 * neg);
    negatives_below += neg;
  });
  return wins / (positives * negatives);
}

std::optional<double> average_precision(const std::vector<int>& labels,
                                        const std::vector<double>& scores) {
  check_column(labels, scores);
  const long positives = static_cast<long>(count_positives(labels));
  if (positives == 0) return std::nullopt;
  long tp = 0, predicted = 0;
  double ap = 0, previous_recall = 0;
  for_each_tie_group(labels, scores, order_by_score(scores, true), [&](long pos, long neg) {
    tp += pos;
    predicted += pos + neg;
    const double recall_now = ratio(tp, positives);
    ap += (recall_now - previous_recall) * ratio(tp, predicted);
    previous_recall = recall_now;
  });
  return ap;
}

BootstrapInterval percentile_bootstrap(std::size_t n, int resamples, std::uint64_t seed,
                                       double level, const ResampleStatistic& value) {
  if (n == 0) throw std::invalid_argument("bootstrap: no sample");
  if (resamples < 1) throw std::invalid_argument("bootstrap: resamples must be >= 1");
  if (!(level > 0 && level < 1)) throw std::invalid_argument("bootstrap: level must be in (0, 1)");
  std::mt19937_64 rng(seed);
  std::vector<std::size_t> indices(n);
  std::vector<double> values;
  BootstrapInterval out;
  for (int r = 0; r < resamples; ++r) {
    for (std::size_t& j : indices) j = std::size_t(rng() % n);
    if (const std::optional<double> v = value(indices)) {
      values.push_back(*v);
    } else {
      ++out.skipped;
    }
  }
  if (values.empty())
    throw std::invalid_argument("bootstrap: the metric is undefined on every resample");
  std::sort(values.begin(), values.end());
  out.used = int(values.size());
  // numpy.percentile (linear): position q (n - 1) between the sorted values.
  auto quantile = [&](double q) {
    const double pos = q * double(values.size() - 1);
    const auto lo = std::size_t(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, values.size() - 1);
    return values[lo] + (pos - double(lo)) * (values[hi] - values[lo]);
  };
  out.low = quantile((1 - level) / 2);
  out.high = quantile((1 + level) / 2);
  return out;
}

namespace {

// Fills l and s with the labels and scores at `indices`.
void gather(const std::vector<std::size_t>& indices, const std::vector<int>& labels,
            const std::vector<double>& scores, std::vector<int>& l, std::vector<double>& s) {
  l.resize(indices.size()), s.resize(indices.size());
  for (std::size_t i = 0; i < indices.size(); ++i) {
    l[i] = labels[indices[i]];
    s[i] = scores[indices[i]];
  }
}

}  // namespace

BootstrapInterval bootstrap_interval(const std::vector<int>& labels,
                                     const std::vector<double>& scores, RankingMetric metric,
                                     int resamples, std::uint64_t seed, double level) {
  return paired_bootstrap_interval(labels, {scores}, {}, metric, resamples, seed, level);
}

BootstrapInterval paired_bootstrap_interval(const std::vector<int>& labels,
                                            const std::vector<std::vector<double>>& a,
                                            const std::vector<std::vector<double>>& b,
                                            RankingMetric metric, int resamples, std::uint64_t seed,
                                            double level) {
  require(!a.empty(), "bootstrap: no score column");
  for (const auto* group : {&a, &b})
    for (const std::vector<double>& column : *group) check_column(labels, column);
  std::vector<int> l;
  std::vector<double> s;
  // The mean of the metric over a group's columns on the resample; nullopt if any is undefined.
  auto mean = [&](const std::vector<std::vector<double>>& group,
                  const std::vector<std::size_t>& indices) -> std::optional<double> {
    double sum = 0;
    for (const std::vector<double>& column : group) {
      gather(indices, labels, column, l, s);
      const std::optional<double> v = metric(l, s);
      if (!v) return std::nullopt;
      sum += *v;
    }
    return sum / double(group.size());
  };
  return percentile_bootstrap(
      labels.size(), resamples, seed, level,
      [&](const std::vector<std::size_t>& indices) -> std::optional<double> {
        const std::optional<double> x = mean(a, indices);
        if (!x || b.empty()) return x;
        const std::optional<double> y = mean(b, indices);
        if (!y) return std::nullopt;
        return *x - *y;
      });
}

// ---- Threshold metrics --------------------------------------------------------------------------

Counts& Counts::operator+=(const Counts& o) {
  tp += o.tp;
  fp += o.fp;
  fn += o.fn;
  tn += o.tn;
  return *this;
}

Counts count_at_threshold(const std::vector<int>& labels, const std::vector<double>& scores,
                          double threshold) {
  check_column(labels, scores);
  Counts c;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const bool predicted = scores[i] >= threshold;
    if (labels[i] == 1) {
      (predicted ? c.tp : c.fn) += 1;
    } else {
      (predicted ? c.fp : c.tn) += 1;
    }
  }
  return c;
}

double precision(const Counts& c) { return ratio(c.tp, c.tp + c.fp); }
double recall(const Counts& c) { return ratio(c.tp, c.tp + c.fn); }
double f1(const Counts& c) { return ratio(2 * c.tp, 2 * c.tp + c.fp + c.fn); }

double hamming_loss(const LabelMatrix& labels, const ScoreMatrix& scores, double threshold) {
  check_matrices(labels, scores);
  Counts total;
  for (std::size_t i = 0; i < labels.size(); ++i)
    total += count_at_threshold(labels[i], scores[i], threshold);
  return ratio(total.fp + total.fn, total.tp + total.fp + total.fn + total.tn);
}

// ---- Top-k metrics ------------------------------------------------------------------------------

std::vector<int> top_k(const std::vector<double>& scores, int k) {
  require(k >= 1, "k must be at least 1, got " + std::to_string(k));
  std::vector<int> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  const auto n = std::min(order.size(), static_cast<std::size_t>(k));
  std::partial_sort(
      order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
      [&](int a, int b) { return scores[a] > scores[b] || (scores[a] == scores[b] && a < b); });
  order.resize(n);
  return order;
}

namespace {

// Number of true labels among the top k of one sample.
long hits_at_k(const std::vector<int>& labels, const std::vector<double>& scores, int k) {
  long hits = 0;
  for (int j : top_k(scores, k)) hits += labels[static_cast<std::size_t>(j)];
  return hits;
}

}  // namespace

std::optional<double> precision_at_k(const LabelMatrix& labels, const ScoreMatrix& scores, int k) {
  check_matrices(labels, scores);
  require(k >= 1, "k must be at least 1, got " + std::to_string(k));
  if (labels.empty()) return std::nullopt;
  double sum = 0;
  for (std::size_t i = 0; i < labels.size(); ++i)
    sum += static_cast<double>(hits_at_k(labels[i], scores[i], k)) / k;
  return sum / static_cast<double>(labels.size());
}

std::optional<double> recall_at_k(const LabelMatrix& labels, const ScoreMatrix& scores, int k) {
  check_matrices(labels, scores);
  require(k >= 1, "k must be at least 1, got " + std::to_string(k));
  double sum = 0;
  std::size_t counted = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const long positives = static_cast<long>(count_positives(labels[i]));
    if (positives == 0) continue;
    sum += ratio(hits_at_k(labels[i], scores[i], k), positives);
    ++counted;
  }
  if (counted == 0) return std::nullopt;
  return sum / static_cast<double>(counted);
}

// ---- Everything at once -------------------------------------------------------------------------

MultiLabelReport evaluate_multilabel(const LabelMatrix& labels, const ScoreMatrix& scores,
                                     double threshold, const std::vector<int>& ks) {
  check_matrices(labels, scores);
  require(!labels.empty(), "no samples");
  require(!labels[0].empty(), "no labels");
  for (int k : ks) require(k >= 1, "k must be at least 1, got " + std::to_string(k));

  MultiLabelReport r;
  r.samples = labels.size();
  r.labels = labels[0].size();

  // Columns, and every (sample, label) pair flattened for the micro averages.
  std::vector<std::vector<int>> label_cols(r.labels, std::vector<int>(r.samples));
  std::vector<std::vector<double>> score_cols(r.labels, std::vector<double>(r.samples));
  std::vector<int> all_labels;
  std::vector<double> all_scores;
  all_labels.reserve(r.samples * r.labels);
  all_scores.reserve(r.samples * r.labels);
  for (std::size_t i = 0; i < r.samples; ++i) {
    for (std::size_t j = 0; j < r.labels; ++j) {
      label_cols[j][i] = labels[i][j];
      score_cols[j][i] = scores[i][j];
    }
    all_labels.insert(all_labels.end(), labels[i].begin(), labels[i].end());
    all_scores.insert(all_scores.end(), scores[i].begin(), scores[i].end());
  }

  Counts total;
  double precision_sum = 0, recall_sum = 0, f1_sum = 0;
  for (std::size_t j = 0; j < r.labels; ++j) {
    r.auc_per_label.push_back(auc_roc(label_cols[j], score_cols[j]));
    r.ap_per_label.push_back(average_precision(label_cols[j], score_cols[j]));
    const Counts c = count_at_threshold(label_cols[j], score_cols[j], threshold);
    total += c;
    precision_sum += precision(c);
    recall_sum += recall(c);
    r.f1_per_label.push_back(f1(c));
    f1_sum += r.f1_per_label.back();
  }
  r.auc_macro = mean_of(r.auc_per_label, r.auc_skipped_labels);
  r.ap_macro = mean_of(r.ap_per_label, r.ap_skipped_labels);
  r.auc_micro = auc_roc(all_labels, all_scores);
  r.ap_micro = average_precision(all_labels, all_scores);

  const double n_labels = static_cast<double>(r.labels);
  r.precision_macro = precision_sum / n_labels;
  r.recall_macro = recall_sum / n_labels;
  r.f1_macro = f1_sum / n_labels;
  r.precision_micro = precision(total);
  r.recall_micro = recall(total);
  r.f1_micro = f1(total);
  r.hamming_loss = ratio(total.fp + total.fn, total.tp + total.fp + total.fn + total.tn);

  for (int k : ks)
    r.at_k.push_back({k, precision_at_k(labels, scores, k), recall_at_k(labels, scores, k)});
  return r;
}

// ---- Classes and sequences ----------------------------------------------------------------------

int argmax(const std::vector<double>& scores) {
  require(!scores.empty(), "argmax of an empty vector");
  return static_cast<int>(std::max_element(scores.begin(), scores.end()) - scores.begin());
}

namespace {

// (correct, counted) over the positions of one sequence.
std::pair<std::size_t, std::size_t> count_correct(const std::vector<int>& predicted,
                                                  const std::vector<int>& target,
                                                  const std::vector<std::uint8_t>& mask) {
  require(predicted.size() == target.size(), "predicted and target differ in length (" +
                                                 std::to_string(predicted.size()) + " vs " +
                                                 std::to_string(target.size()) + ")");
  require(mask.empty() || mask.size() == target.size(),
          "mask length " + std::to_string(mask.size()) + " differs from target length " +
              std::to_string(target.size()));
  std::size_t correct = 0, counted = 0;
  for (std::size_t i = 0; i < target.size(); ++i) {
    if (!mask.empty() && mask[i] == 0) continue;
    ++counted;
    if (predicted[i] == target[i]) ++correct;
  }
  return {correct, counted};
}

}  // namespace

std::optional<double> accuracy(const std::vector<int>& predicted, const std::vector<int>& target,
                               const std::vector<std::uint8_t>& mask) {
  const auto [correct, counted] = count_correct(predicted, target, mask);
  if (counted == 0) return std::nullopt;
  return static_cast<double>(correct) / static_cast<double>(counted);
}

std::optional<double> sequence_accuracy(const std::vector<std::vector<int>>& predicted,
                                        const std::vector<std::vector<int>>& target,
                                        const std::vector<std::vector<std::uint8_t>>& masks) {
  require(predicted.size() == target.size(), "predicted and target differ in number of sequences");
  require(masks.empty() || masks.size() == target.size(),
          "masks differ from target in number of sequences");
  static const std::vector<std::uint8_t> kNoMask;
  std::size_t correct = 0, counted = 0;
  for (std::size_t s = 0; s < target.size(); ++s) {
    const auto [ok, n] = count_correct(predicted[s], target[s], masks.empty() ? kNoMask : masks[s]);
    if (n == 0) continue;
    ++counted;
    if (ok == n) ++correct;
  }
  if (counted == 0) return std::nullopt;
  return static_cast<double>(correct) / static_cast<double>(counted);
}

// ---- bAbI ---------------------------------------------------------------------------------------

BabiSummary summarize_babi(const std::map<int, TaskCount>& counts, double fail_percent) {
  require(!counts.empty(), "bAbI summary of no tasks");
  BabiSummary summary;
  double sum = 0;
  for (const auto& [task, c] : counts) {
    require(c.total >= 1 && c.correct >= 0 && c.correct <= c.total,
            "bAbI task " + std::to_string(task) + ": bad counts (" + std::to_string(c.correct) +
                " correct of " + std::to_string(c.total) + ")");
    const double error = 100.0 * static_cast<double>(c.total - c.correct) / c.total;
    summary.task_error_percent[task] = error;
    sum += error;
    if (error > fail_percent) ++summary.failed_tasks;
  }
  summary.mean_error = sum / static_cast<double>(counts.size());
  return summary;
}

// ---- Reading matrices from files ----------------------------------------------------------------

namespace {

std::string_view trim(std::string_view s) {
  const char* space = " \t\r\n\f\v";
  const auto first = s.find_first_not_of(space);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(space) - first + 1);
}

std::string_view unquote(std::string_view s) {
  s = trim(s);
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = trim(s.substr(1, s.size() - 2));
  return s;
}

std::optional<double> parse_number(std::string_view text) {
  if (text.empty()) return std::nullopt;
  const std::string copy(text);  // strtod needs a terminated string
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size()) return std::nullopt;
  return v;  // may be inf/nan (text "inf", "nan", or overflow): the caller reports it
}

bool is_boolean_or_null(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  return lower == "true" || lower == "false" || lower == "null";
}

// The header rule, one for CSV and JSONL: a name is text that is not empty, not a number, and
// not true, false or null (a boolean is bad data, not a column name).
bool is_name(std::string_view text) {
  return !text.empty() && !parse_number(text) && !is_boolean_or_null(text);
}

std::vector<std::string_view> split_csv(std::string_view line) {
  std::vector<std::string_view> cells;
  for (std::size_t start = 0;;) {
    const auto comma = line.find(',', start);
    cells.push_back(
        line.substr(start, comma == std::string_view::npos ? line.npos : comma - start));
    if (comma == std::string_view::npos) return cells;
    start = comma + 1;
  }
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// One cell of a row as read: its number if it is one, its text for messages, and whether it is
// a name (is_name; in JSONL only a string can be one).
struct Cell {
  std::optional<double> value;
  std::string text;
  bool name = false;
};

class TableBuilder {
 public:
  explicit TableBuilder(const std::string& path) { table_.path = path; }

  [[noreturn]] void fail(std::size_t line, const std::string& message) const {
    throw DataError(table_.path + ":" + std::to_string(line) + ": " + message);
  }

  // One row. The first row is the header when every cell of it is a name.
  void add(std::size_t line, const std::vector<Cell>& cells) {
    const bool first = !seen_first_;
    seen_first_ = true;
    if (first) columns_ = cells.size();
    if (first && !cells.empty() &&
        std::all_of(cells.begin(), cells.end(), [](const Cell& c) { return c.name; })) {
      table_.header_line = line;
      for (const Cell& c : cells) table_.header.push_back(c.text);
      return;
    }
    if (cells.empty()) fail(line, "empty row (no values)");
    if (cells.size() != columns_)
      fail(line, "expected " + std::to_string(columns_) + " columns, found " +
                     std::to_string(cells.size()));
    std::vector<double> row;
    row.reserve(cells.size());
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string where = "column " + std::to_string(c + 1) + ": ";
      const Cell& cell = cells[c];
      if (!cell.value) {
        std::string message = where + "not a number: " + quote(cell.text);
        if (is_boolean_or_null(unquote(cell.text)))
          message += " (labels are 0 or 1, scores numbers)";
        else if (cell.name && first)
          message += " (a first row is a header only when every cell is a name)";
        fail(line, message);
      }
      if (!std::isfinite(*cell.value))
        fail(line, where + "value is not finite: " + quote(cell.text));
      row.push_back(*cell.value);
    }
    table_.rows.push_back(std::move(row));
    table_.lines.push_back(line);
  }

  Table finish() {
    if (!seen_first_) throw DataError(table_.path + ": empty file (no data rows)");
    if (table_.rows.empty()) throw DataError(table_.path + ": no data rows after the header");
    return std::move(table_);
  }

 private:
  Table table_;
  bool seen_first_ = false;
  std::size_t columns_ = 0;
};

void add_csv_line(TableBuilder& builder, std::size_t line, std::string_view text) {
  std::vector<Cell> cells;
  for (std::string_view raw : split_csv(text)) {
    const std::string_view cell = unquote(raw);
    cells.push_back({parse_number(cell), std::string(trim(raw)), is_name(cell)});
  }
  builder.add(line, cells);
}

void add_jsonl_line(TableBuilder& builder, std::size_t line, std::string_view text) {
  std::vector<Cell> cells;
  try {
    const nlohmann::json row = parse_json(text);
    if (!row.is_array())
      builder.fail(line, "expected a JSON array, found " + quote(dump_json(row)));
    for (const auto& cell : row) {
      const bool number = cell.is_number();
      cells.push_back({number ? std::optional<double>(cell.get<double>()) : std::nullopt,
                       dump_json(cell), cell.is_string() && is_name(cell.get<std::string>())});
    }
  } catch (const nlohmann::json::exception& e) {  // syntax, number overflow (1e400), ...
    builder.fail(line, "invalid JSON: " + escape(e.what(), 200));
  }
  builder.add(line, cells);
}

}  // namespace

Table read_matrix(std::istream& in, const std::string& path, Format format) {
  TableBuilder builder(path);
  std::string text;
  for (std::size_t line = 1; std::getline(in, text); ++line) {
    if (line == 1 && text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);  // UTF-8 byte order mark
    if (trim(text).empty()) continue;
    if (format == Format::jsonl) {
      add_jsonl_line(builder, line, text);
    } else {
      add_csv_line(builder, line, text);
    }
  }
  if (in.bad()) throw DataError(path + ": read error");
  return builder.finish();
}

Table read_matrix_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw DataError(path + ": is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(path + ": cannot open file (" + std::strerror(errno) + ")");
  return read_matrix(in, path, ends_with(path, ".jsonl") ? Format::jsonl : Format::csv);
}

std::string header_note(const Table& table) {
  if (table.header.empty()) return "";
  constexpr std::size_t kShown = 5;
  std::string names;
  for (std::size_t c = 0; c < table.header.size() && c < kShown; ++c)
    names += (c ? ", " : "") + quote(table.header[c]);
  if (table.header.size() > kShown) names += ", ...";
  return table.path + ":" + std::to_string(table.header_line) + ": header row of " +
         std::to_string(table.header.size()) + (table.header.size() == 1 ? " name" : " names") +
         " skipped (" + names + ")";
}

LabelMatrix to_labels(const Table& table) {
  LabelMatrix labels;
  labels.reserve(table.rows.size());
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    std::vector<int> row;
    row.reserve(table.rows[i].size());
    for (std::size_t c = 0; c < table.rows[i].size(); ++c) {
      const double v = table.rows[i][c];
      if (v != 0.0 && v != 1.0) {
        std::ostringstream value;
        value.precision(17);
        value << v;
        throw DataError(table.path + ":" + std::to_string(table.lines[i]) + ": column " +
                        std::to_string(c + 1) + ": label must be 0 or 1, found " + value.str());
      }
      row.push_back(v == 1.0 ? 1 : 0);
    }
    labels.push_back(std::move(row));
  }
  return labels;
}

void check_same_shape(const Table& labels, const Table& scores) {
  const std::size_t common = std::min(labels.rows.size(), scores.rows.size());
  for (std::size_t i = 0; i < common; ++i) {
    if (scores.rows[i].size() != labels.rows[i].size())
      throw DataError(scores.path + ":" + std::to_string(scores.lines[i]) + ": expected " +
                      std::to_string(labels.rows[i].size()) + " columns (as in " + labels.path +
                      "), found " + std::to_string(scores.rows[i].size()));
  }
  if (scores.rows.size() != labels.rows.size())
    throw DataError(scores.path + ": " + std::to_string(scores.rows.size()) + " data rows, but " +
                    labels.path + " has " + std::to_string(labels.rows.size()));
}

}  // namespace memgrad::metrics
