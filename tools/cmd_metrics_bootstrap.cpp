// memgrad metrics bootstrap: percentile bootstrap intervals of AUC-ROC and AUC-PR from a
// per-example scores file (`memgrad eval --scores`), and the paired bootstrap of the difference
// between two models scored on the same examples. The resampling lives in tasks/metrics.hpp.
// Per-label (multi-label) score files are handed to tools/bootstrap_multilabel.hpp.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/json_text.hpp"
#include "engine/quote.hpp"
#include "tasks/example_scores.hpp"
#include "tasks/label_scores.hpp"
#include "tasks/metrics.hpp"
#include "tools/args.hpp"
#include "tools/bootstrap_multilabel.hpp"
#include "tools/commands.hpp"

namespace memgrad::cli {

namespace {

constexpr const char* kHelp =
    R"(usage: memgrad metrics bootstrap --scores FILE[,FILE...] [--versus FILE[,FILE...]]
                                 [--split NAME] [--resamples 1000] [--seed 1] [--level 0.95]
                                 [--format json|table] [--k 5]

Percentile bootstrap intervals of AUC-ROC and AUC-PR (average precision) of one split of a
per-example scores file, as `memgrad eval --checkpoint RUN --scores FILE` writes it (CSV
record_id,split,label,score; the score is the model's logit).

Multi-label files (CSV record_id,split,code,gold,score, one line per note and label: the codiesp
and codiesp-kb tasks' --scores) are told by their header: the bootstrap then resamples notes and
gives macro AUC-ROC (mean over the labels with a positive and a negative among the resampled
notes), micro AUC-ROC (all note-label pairs) and P@k (--k, default 5) of sigmoid(score), as the
task's metrics.json computes them; the default split is then test. Paired files must hold the
same notes in the same order, the same labels (codes, order) and the same gold values.

  --scores FILES   model A's scores; a comma-separated list (e.g. one model's seeds) makes A's
                   metric the mean of the files' metrics, on each resample as on the data (an
                   empty item, as in a trailing comma, is an error)
  --versus FILES   model B's scores on the same examples (one file or a list): adds B's
                   intervals and the PAIRED bootstrap interval of A - B (each resample of the
                   examples is applied to every file). All files must hold the same record ids,
                   in the same order, with the same labels, for the split; the first mismatch
                   is an error naming both files' lines.
  --split NAME     the split to use (default set_b; test for multi-label files)
  --resamples N    bootstrap resamples (default 1000)
  --seed S         the resamples' seed (default 1): resample r, draw i is example
                   mt19937_64(S)() % n, drawn in order; the same seed gives the same resamples
                   for every file of the same size
  --level L        the interval's coverage (default 0.95): the (1 - L)/2 and (1 + L)/2
                   percentiles of the resampled values (numpy.percentile's linear rule)
  --format F       json (default) or table
  --k K            multi-label files: P@K (default 5)

Resamples where a metric is undefined (one class only) are skipped and counted ("skipped").
Bad input (a missing file, a line without four fields, a label other than 0/1, a score that is
not a finite number, a split absent from a file, mismatched record ids) prints
"FILE:LINE: problem" and exits with code 2.
)";

struct Split {
  std::vector<int> labels;
  std::vector<double> scores;
  std::vector<ExampleScore> rows;
};

Split split_of(const std::string& path, const std::string& split) {
  Split out;
  std::set<std::string> names;
  for (ExampleScore& e : read_example_scores(path)) {
    names.insert(e.split);
    if (e.split != split) continue;
    out.labels.push_back(e.label);
    out.scores.push_back(e.score);
    out.rows.push_back(std::move(e));
  }
  if (out.rows.empty()) {
    std::string known;
    for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
    throw UsageError(path + ": no example of split " + quote(split) + " (the file has " + known +
                     ")");
  }
  return out;
}

// The same record ids in the same order with the same labels, else a UsageError at the first
// difference.
void check_paired(const std::string& a_path, const Split& a, const std::string& b_path,
                  const Split& b, const std::string& split) {
  const size_t n = std::min(a.rows.size(), b.rows.size());
  for (size_t i = 0; i < n; ++i) {
    const ExampleScore &x = a.rows[i], &y = b.rows[i];
    if (x.record_id != y.record_id)
      throw UsageError(a_path + ":" + std::to_string(x.line) + ": record " + quote(x.record_id) +
                       " where " + b_path + ":" + std::to_string(y.line) + " has record " +
                       quote(y.record_id) + " (example " + std::to_string(i + 1) + " of split " +
                       quote(split) +
                       "; a paired bootstrap needs the same stays in the same order)");
    if (x.label != y.label)
      throw UsageError(a_path + ":" + std::to_string(x.line) + ": record " + quote(x.record_id) +
                       " has label " + std::to_string(x.label) + ", " + b_path + ":" +
                       std::to_string(y.line) + " label " + std::to_string(y.label));
  }
  if (a.rows.size() != b.rows.size())
    throw UsageError(a_path + " has " + std::to_string(a.rows.size()) + " examples of split " +
                     quote(split) + ", " + b_path + " " + std::to_string(b.rows.size()));
}

// A metric's value and its interval, as [low, high].
struct Estimate {
  double value = 0;
  metrics::BootstrapInterval ci;
};

nlohmann::ordered_json to_json(const Estimate& auc, const Estimate& ap) {
  nlohmann::ordered_json j;
  j["auc_roc"] = auc.value;
  j["auc_roc_ci"] = {auc.ci.low, auc.ci.high};
  j["auc_pr"] = ap.value;
  j["auc_pr_ci"] = {ap.ci.low, ap.ci.high};
  j["skipped"] = auc.ci.skipped + ap.ci.skipped;
  return j;
}

double defined(const std::optional<double>& v, const std::string& what) {
  if (!v) throw UsageError(what + " is undefined (the split needs a positive and a negative)");
  return *v;
}

// A group of files (one model, or its seeds): the mean of each metric over the files and the
// bootstrap interval of that mean.
struct Group {
  std::vector<std::string> paths;
  std::vector<Split> splits;
  std::vector<std::vector<double>> columns() const {
    std::vector<std::vector<double>> c;
    for (const Split& s : splits) c.push_back(s.scores);
    return c;
  }
};

double mean_metric(const Group& g, metrics::RankingMetric metric, const std::string& what) {
  double sum = 0;
  for (size_t i = 0; i < g.splits.size(); ++i)
    sum += defined(metric(g.splits[i].labels, g.splits[i].scores), g.paths[i] + ": " + what);
  return sum / double(g.splits.size());
}

nlohmann::ordered_json group_json(const Group& g, const Group* versus, int resamples, uint64_t seed,
                                  double level) {
  const std::vector<int>& labels = g.splits.front().labels;
  auto estimate = [&](metrics::RankingMetric metric, const char* what) {
    return Estimate{
        mean_metric(g, metric, what) - (versus ? mean_metric(*versus, metric, what) : 0),
        metrics::paired_bootstrap_interval(
            labels, g.columns(), versus ? versus->columns() : std::vector<std::vector<double>>{},
            metric, resamples, seed, level)};
  };
  nlohmann::ordered_json j;
  if (!versus) j["files"] = g.paths;
  j.update(to_json(estimate(&metrics::auc_roc, "AUC-ROC"),
                   estimate(&metrics::average_precision, "AUC-PR")));
  return j;
}

Group read_group(const std::vector<std::string>& paths, const std::string& split) {
  Group g;
  for (const std::string& path : paths) {
    g.splits.push_back(split_of(path, split));
    g.paths.push_back(path);
  }
  return g;
}

void print_table(const nlohmann::ordered_json& j) {
  std::printf("split %s: %lld examples, %lld positives; %d resamples (seed %llu), %.3g intervals\n",
              j["split"].get<std::string>().c_str(), j["examples"].get<long long>(),
              j["positives"].get<long long>(), j["resamples"].get<int>(),
              j["seed"].get<unsigned long long>(), j["level"].get<double>());
  for (const char* key : {"a", "b", "difference"}) {
    if (!j.contains(key)) continue;
    const auto& m = j[key];
    const std::string name = bootstrap_group_name(key, m);
    std::printf("  %-40s AUC-ROC %.4f [%.4f, %.4f]  AUC-PR %.4f [%.4f, %.4f]\n", name.c_str(),
                m["auc_roc"].get<double>(), m["auc_roc_ci"][0].get<double>(),
                m["auc_roc_ci"][1].get<double>(), m["auc_pr"].get<double>(),
                m["auc_pr_ci"][0].get<double>(), m["auc_pr_ci"][1].get<double>());
  }
}

}  // namespace

int cmd_metrics_bootstrap(const Words& words) {
  const Args args(
      words, {"help"},
      {"scores", "versus", "split", "resamples", "seed", "level", "format", "threads", "k"});
  if (args.has("help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  threads_option(args);
  if (!args.positional().empty())
    throw UsageError("unexpected argument " + quote(args.positional()[0]) + " (see --help)");
  const auto a_paths = args.get_list("scores");
  if (!a_paths) throw UsageError("--scores FILE is required (see --help)");
  const auto b_paths = args.get_list("versus");
  const bool multilabel = is_label_scores_file(a_paths->front());
  const std::string split = args.get("split", multilabel ? "test" : "set_b");
  const long resamples = args.get_int("resamples", 1000);
  if (resamples < 1 || resamples > 10000000)
    throw UsageError("--resamples must be in [1, 10000000], got " + std::to_string(resamples));
  const long seed = args.get_int("seed", 1);
  if (seed < 0) throw UsageError("--seed must be >= 0, got " + std::to_string(seed));
  const double level = args.get_double("level", 0.95);
  if (!(level > 0 && level < 1)) throw UsageError("--level must be in (0, 1)");
  const std::string format = args.get("format", "json");
  if (format != "json" && format != "table")
    throw UsageError("--format must be json or table, got " + quote(format));

  if (multilabel) {
    const long k = args.get_int("k", 5);
    if (k < 1 || k > 1000000)
      throw UsageError("--k must be in [1, 1000000], got " + std::to_string(k));
    const nlohmann::ordered_json j =
        multilabel_bootstrap({.scores = *a_paths,
                              .versus = b_paths.value_or(std::vector<std::string>{}),
                              .split = split,
                              .resamples = int(resamples),
                              .seed = uint64_t(seed),
                              .level = level,
                              .k = int(k)});
    if (format == "json")
      std::printf("%s\n", dump_json(j).c_str());
    else
      print_multilabel_bootstrap(j);
    return 0;
  }
  if (args.has("k")) throw UsageError("--k is for multi-label score files");
  nlohmann::ordered_json out;
  try {
    const Group a = read_group(*a_paths, split);
    std::optional<Group> b;
    if (b_paths) b = read_group(*b_paths, split);
    const Split& first = a.splits.front();
    for (const Group* g : {&a, b ? static_cast<const Group*>(&*b) : nullptr})
      for (size_t i = 0; g && i < g->splits.size(); ++i)
        check_paired(a.paths.front(), first, g->paths[i], g->splits[i], split);
    out["split"] = split;
    out["examples"] = first.rows.size();
    out["positives"] = std::count(first.labels.begin(), first.labels.end(), 1);
    out["resamples"] = int(resamples);
    out["seed"] = uint64_t(seed);
    out["level"] = level;
    out["a"] = group_json(a, nullptr, int(resamples), uint64_t(seed), level);
    if (b) {
      out["b"] = group_json(*b, nullptr, int(resamples), uint64_t(seed), level);
      out["difference"] = group_json(a, &*b, int(resamples), uint64_t(seed), level);
    }
  } catch (const metrics::DataError& e) {
    throw UsageError(e.what());
  }
  if (format == "json")
    std::printf("%s\n", dump_json(out).c_str());
  else
    print_table(out);
  return 0;
}

}  // namespace memgrad::cli
