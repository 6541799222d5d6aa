// The GRNN paper's Fig. 3, left (Vani, Jernite & Sontag 2017): AUC-PR against label frequency,
// one line per model. "The GRNN AUC(PR) outperforms most baselines regardless of label frequency
// [...] most of an advantage on concepts in the middle of the frequency spectrum." Drawn from
// trained runs' metrics.json (the codiesp task writes each test label's AUC-PR and training
// frequency under "per_label"), not from one sample: the labels are put in bins of a factor 2 of
// their training documents, and a point is the bin's mean AUC-PR over its labels with a test
// positive, averaged over the runs of one line. Runs whose config.json differ only in the seed
// are one line (a model's seeds); the paper draws one run per model on MIMIC-III.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "engine/error.hpp"
#include "engine/json_text.hpp"
#include "tools/figures/figure.hpp"
#include "tools/svg_chart.hpp"
#include "tools/trace_view.hpp"

namespace memgrad::cli {
namespace {

constexpr const char* kName = "grnn-fig3";

// The run's config without its seeds: runs equal under it are seeds of one line.
std::string line_key(nlohmann::json config) {
  config.erase("seed");
  if (config.contains("task_settings")) config["task_settings"].erase("seed");
  return dump_json(config);
}

const nlohmann::json& per_label(const RunLog& run) {
  MG_CHECK(run.metrics.is_object() && run.metrics.contains("per_label"), "figure ", kName, ": ",
           run.path,
           "/metrics.json has no per_label (an unfinished run, or one trained before the task "
           "wrote it: `memgrad eval --checkpoint DIR --json` prints the metrics with it; save "
           "them as DIR/metrics.json)");
  return run.metrics.at("per_label");
}

// Bin of a label trained on `docs` documents: floor(log2 docs), so bin b holds [2^b, 2^(b+1)).
int bin_of(int64_t docs) { return docs < 1 ? 0 : int(std::floor(std::log2(double(docs)))); }

struct Line {
  std::string model, folder;  // the first run's model and the folder holding it
  std::vector<const RunLog*> runs;
};

// The name of the folder holding the run directory `path` ("r/grnn/seed1/" -> "grnn").
std::string folder_of(const std::string& path) {
  std::filesystem::path run(path);
  if (!run.has_filename()) run = run.parent_path();  // a trailing '/'
  const std::string folder = run.parent_path().filename().string();
  return folder.empty() ? "." : folder;
}

// One bin of labels: its training-document range [lo, 2 lo), its labels, its point's x.
struct Bin {
  int64_t lo = 0;
  std::vector<size_t> labels;
  double x = 0;  // the geometric mean of its labels' training documents
};

// What the figure and its page's table show: the bins, and per line the mean over its runs of
// each bin's mean AUC-PR (NaN where no run has a label with a test positive in the bin), and the
// sd over the runs.
struct Curves {
  std::vector<Bin> bins;
  std::vector<std::string> names;
  std::vector<size_t> runs;
  std::vector<std::vector<double>> mean, sd;
};

Curves curves(const std::vector<RunLog>& runs) {
  // The labels and their training frequencies: every run must have the first run's.
  const nlohmann::json& first = per_label(runs.front());
  const auto codes = first.at("code").get<std::vector<std::string>>();
  const auto docs = first.at("train_docs").get<std::vector<int64_t>>();
  MG_CHECK(!codes.empty() && docs.size() == codes.size(), "figure ", kName, ": ", runs.front().path,
           "/metrics.json: per_label has ", codes.size(), " codes and ", docs.size(),
           " training counts");
  std::vector<Line> lines;
  std::map<std::string, size_t> line_of;
  for (const RunLog& run : runs) {
    const nlohmann::json& p = per_label(run);
    MG_CHECK(p.at("code") == first.at("code") && p.at("train_docs") == first.at("train_docs") &&
                 p.at("auc_pr").size() == codes.size(),
             "figure ", kName, ": ", run.path, " has other labels than ", runs.front().path,
             " (another label set or data); a figure compares runs of one label set");
    const auto [it, added] = line_of.try_emplace(line_key(run.config), lines.size());
    if (added)
      lines.push_back(
          {.model = run.config.at("model").get<std::string>(), .folder = folder_of(run.path)});
    lines[it->second].runs.push_back(&run);
  }

  Curves c;
  std::map<int, std::vector<size_t>> by_bin;
  for (size_t l = 0; l < codes.size(); ++l) by_bin[bin_of(docs[l])].push_back(l);
  for (const auto& [b, labels] : by_bin) {
    double log_sum = 0;
    for (size_t l : labels) log_sum += std::log(double(std::max<int64_t>(docs[l], 1)));
    c.bins.push_back(
        {.lo = int64_t(1) << b, .labels = labels, .x = std::exp(log_sum / double(labels.size()))});
  }
  std::map<std::string, int> models;
  for (const Line& line : lines) ++models[line.model];
  for (const Line& line : lines) {
    std::string name = line.model;
    if (models[line.model] > 1) name += " (" + line.folder + ")";
    if (line.runs.size() > 1) name += ", " + std::to_string(line.runs.size()) + " runs";
    c.names.push_back(name);
    c.runs.push_back(line.runs.size());
    std::vector<double> mean, sd;
    for (const Bin& bin : c.bins) {
      std::vector<double> per_run;  // each run's mean over the bin's labels with a positive
      for (const RunLog* run : line.runs) {
        const nlohmann::json& ap = per_label(*run).at("auc_pr");
        double sum = 0;
        int n = 0;
        for (size_t l : bin.labels)
          if (ap.at(l).is_number()) {
            sum += ap.at(l).get<double>();
            ++n;
          }
        if (n > 0) per_run.push_back(sum / n);
      }
      double m = 0, v = 0;
      for (double y : per_run) m += y / double(per_run.size());
      for (double y : per_run) v += (y - m) * (y - m);
      mean.push_back(per_run.empty() ? std::nan("") : m);
      sd.push_back(per_run.size() > 1 ? std::sqrt(v / double(per_run.size() - 1)) : 0.0);
    }
    c.mean.push_back(std::move(mean));
    c.sd.push_back(std::move(sd));
  }
  return c;
}

std::string draw(const std::vector<RunLog>& runs) {
  const Curves c = curves(runs);
  std::string counts;
  for (const Bin& bin : c.bins)
    counts += (counts.empty() ? "" : ", ") + std::to_string(bin.labels.size());
  std::vector<ChartLine> chart;
  for (size_t k = 0; k < c.names.size(); ++k) {
    ChartLine line{.label = c.names[k], .y = c.mean[k], .colour = int(k), .markers = true};
    for (const Bin& bin : c.bins) line.x.push_back(bin.x);
    chart.push_back(std::move(line));
  }
  ChartSpec spec;
  spec.title = "Test AUC-PR by label frequency, CodiEsp (GRNN Fig. 3 left: MIMIC-III)";
  spec.x_label = "labels per bin " + counts + "; training documents per label";
  spec.y_label = "mean AUC-PR of the bin's labels";
  spec.log_x = true;
  spec.width = 820;
  spec.height = 340;
  return line_chart_svg(spec, chart);
}

// The page's table under the figure: a row per line, a column per bin, mean ± sd over the runs.
std::string table(const std::vector<RunLog>& runs) {
  const Curves c = curves(runs);
  std::ostringstream out;
  char cell[64];
  out << "<table border=\"1\" cellpadding=\"3\" style=\"border-collapse:collapse\">\n<tr><th>"
         "training documents (labels)</th>";
  for (const Bin& bin : c.bins)
    out << "<th>" << bin.lo << "-" << 2 * bin.lo - 1 << " (" << bin.labels.size() << ")</th>";
  out << "</tr>\n";
  for (size_t k = 0; k < c.names.size(); ++k) {
    out << "<tr><td>" << html_escape(c.names[k]) << "</td>";
    for (size_t b = 0; b < c.bins.size(); ++b) {
      if (std::isnan(c.mean[k][b]))
        std::snprintf(cell, sizeof cell, "-");
      else if (c.runs[k] > 1)
        std::snprintf(cell, sizeof cell, "%.3f ± %.3f", c.mean[k][b], c.sd[k][b]);
      else
        std::snprintf(cell, sizeof cell, "%.3f", c.mean[k][b]);
      out << "<td>" << cell << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</table>\n<p>A cell: the mean test AUC-PR of the bin's labels with a test positive, "
         "averaged over the line's runs (± the sd over them).</p>\n";
  return out.str();
}

const bool kRegistered = [] {
  register_figure({.name = kName,
                   .paper = "GRNN (Vani, Jernite & Sontag 2017), Fig. 3 left",
                   .summary =
                       "test AUC-PR against the label's number of training documents (bins of a "
                       "factor 2), one line per model; runs that differ only in the seed are one "
                       "line, their mean (from each run's metrics.json per_label)",
                   .models = {"grnn", "bigrnn", "text-gru", "text-bigru", "bow-attention",
                              "l1-logreg", "linear-svm"},
                   .tasks = {"codiesp"},
                   .draw_runs = draw,
                   .runs_page_body = table});
  return true;
}();

}  // namespace
}  // namespace memgrad::cli
