// memgrad plot: the training curves of one or more runs (their log.jsonl), overlaid, as one
// self-contained SVG or HTML page.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "engine/checkpoint.hpp"
#include "engine/error.hpp"
#include "engine/json_text.hpp"
#include "engine/quote.hpp"
#include "tools/args.hpp"
#include "tools/commands.hpp"
#include "tools/run_dir.hpp"
#include "tools/svg_chart.hpp"
#include "tools/trace_view.hpp"

namespace memgrad::cli {
namespace {

const char* kHelp =
    R"(usage: memgrad plot RUN [RUN...] --out FILE.svg|FILE.html [--names A,B,...] [--title TEXT]

Draws the training curves of runs of `memgrad train` from their log.jsonl, the runs overlaid in
one colour each (named by their directory, or --names): the training loss (the logged step's
loss, and dashed the mean since the previous line), every number of the evaluations
(--eval-every; a table of up to 4, such as accuracy per Lmax, one panel each) and of the epoch
lines (validation scores), the learning rate and the gradient norm (before clipping; log
scale), each a panel against the step (an evaluation number that never changes, such as the
number of test samples, is left out). RUN is a run directory or a log.jsonl.

  --out FILE      FILE.svg: one SVG of all panels; FILE.html: a page with the runs' configs
  --names A,B     the runs' names in the legend, one per RUN
  --title TEXT    the title (default: the runs' names)

Every file is self-contained (no scripts, fonts or links). A missing log.jsonl, a line that is
not a JSON object or has no whole-number "step" is an error naming file and line; a torn last
line (a run being written) is skipped with a note.
)";

// The curves of one run: per key, (step, value) points.
struct RunCurves {
  std::string name, path;
  nlohmann::json config;  // config.json beside the log, when there is one
  std::map<std::string, std::vector<std::pair<double, double>>> series;
  std::vector<std::string> order;  // keys in first-seen order
  void add(const std::string& key, double step, double value) {
    if (!series.count(key)) order.push_back(key);
    series[key].emplace_back(step, value);
  }
};

std::string log_path_of(const std::string& run) {
  const std::string suffix = "log.jsonl";
  if (run.size() >= suffix.size() &&
      run.compare(run.size() - suffix.size(), suffix.size(), suffix) == 0)
    return run;
  return RunDir{run}.log();
}

// The numbers of one log line under `prefix` ("eval: "): top-level numbers, and the numbers of a
// small nested table ("accuracy": {"4": 0.9} becomes "accuracy 4"); larger tables (per-task
// errors) are left to the run's metrics.json.
void add_numbers(RunCurves& run, const nlohmann::json& object, const std::string& prefix,
                 double step, std::initializer_list<const char*> skip) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (std::find_if(skip.begin(), skip.end(), [&](const char* s) { return it.key() == s; }) !=
        skip.end())
      continue;
    if (it->is_number() && !it->is_boolean()) {
      run.add(prefix + it.key(), step, it->get<double>());
    } else if (it->is_object() && it->size() <= 4) {
      for (auto sub = it->begin(); sub != it->end(); ++sub)
        if (sub->is_number() && !sub->is_boolean())
          run.add(prefix + it.key() + " " + sub.key(), step, sub->get<double>());
    }
  }
}

RunCurves read_run(const std::string& run, const std::string& name) {
  RunCurves curves;
  curves.name = name;
  curves.path = log_path_of(run);
  std::ifstream in(curves.path, std::ios::binary);
  if (!in)
    throw UsageError(quote(curves.path) + ": cannot read it (is " + quote(run) +
                     " a run directory of memgrad train?)");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const bool torn_end = !text.empty() && text.back() != '\n';
  size_t start = 0;
  int64_t line_number = 0, used = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string line = text.substr(start, end - start);
    const bool last = end >= text.size() - 1;
    start = end + 1;
    ++line_number;
    const std::string where = curves.path + ":" + std::to_string(line_number);
    nlohmann::json j = parse_json_or_discarded(line);
    if (j.is_discarded() || !j.is_object()) {
      if (last && torn_end) {  // a run still writing it
        std::fprintf(stderr, "memgrad plot: note: %s: skipped the unfinished last line\n",
                     where.c_str());
        break;
      }
      fail(where, ": not a JSON object: ", quote(line));
    }
    const auto step = j.find("step");
    MG_CHECK(step != j.end() && step->is_number_integer(), where,
             ": the line has no whole-number \"step\": ", quote(line));
    const double x = step->get<double>();
    ++used;
    if (j.contains("loss")) {
      add_numbers(curves, j, "", x, {"step", "steps_per_s"});
    } else if (j.contains("eval")) {
      MG_CHECK(j["eval"].is_object(), where, ": \"eval\" is not an object");
      add_numbers(curves, j["eval"], "eval: ", x, {});
    } else if (j.contains("epoch")) {
      add_numbers(curves, j, "epoch: ", x, {"step", "epoch"});
    }
  }
  MG_CHECK(used > 0, curves.path, ": no log lines yet");
  // The run's config, for the page (model, task, optimizer); absent beside a bare log.jsonl.
  const std::string dir =
      curves.path.size() > 9 ? curves.path.substr(0, curves.path.size() - 9) : "";
  std::ifstream config(dir + "config.json");
  if (config) curves.config = parse_json_or_discarded(config);
  return curves;
}

// The run's name: its directory's last component.
std::string default_name(const std::string& run) {
  std::string p = run;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const std::string suffix = "/log.jsonl";
  if (p.size() > suffix.size() && p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0)
    p.resize(p.size() - suffix.size());
  const size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

struct Panel {
  std::string key, title, y_label;
  bool log_y = false;
};

// The panels in reading order: loss, evaluations, epoch scores, then learning rate and gradient
// norm; only those some run has.
std::vector<Panel> panels_of(const std::vector<RunCurves>& runs) {
  std::vector<std::string> keys;
  for (const RunCurves& r : runs)
    for (const std::string& k : r.order)
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  auto has = [&](const std::string& k) {
    return std::find(keys.begin(), keys.end(), k) != keys.end();
  };
  // An evaluation number that never changes (the number of test samples) is no curve.
  auto varies = [&](const std::string& k) {
    for (const RunCurves& r : runs) {
      const auto it = r.series.find(k);
      if (it == r.series.end()) continue;
      for (const auto& point : it->second)
        if (point.second != it->second.front().second) return true;
    }
    return false;
  };
  std::vector<Panel> panels;
  if (has("loss")) panels.push_back({"loss", "training loss", "loss", false});
  for (const char* prefix : {"eval: ", "epoch: "})
    for (const std::string& k : keys)
      if (k.rfind(prefix, 0) == 0 && varies(k))
        panels.push_back({k, k, k.substr(std::string(prefix).size())});
  if (has("lr")) panels.push_back({"lr", "learning rate", "lr", false});
  if (has("grad_norm"))
    panels.push_back({"grad_norm", "gradient norm (before clipping)", "|g|", true});
  return panels;
}

std::vector<ChartLine> lines_of(const Panel& panel, const std::vector<RunCurves>& runs) {
  std::vector<ChartLine> lines;
  for (size_t r = 0; r < runs.size(); ++r) {
    auto add = [&](const std::string& key, const std::string& label, bool dashed) {
      const auto it = runs[r].series.find(key);
      if (it == runs[r].series.end()) return;
      ChartLine line;
      line.label = label;
      line.colour = int(r);
      line.dashed = dashed;
      line.markers = panel.key.rfind("eval: ", 0) == 0 || panel.key.rfind("epoch: ", 0) == 0;
      for (const auto& [x, y] : it->second) {
        line.x.push_back(x);
        line.y.push_back(y);
      }
      lines.push_back(std::move(line));
    };
    add(panel.key, runs[r].name, false);
    if (panel.key == "loss") add("loss_mean", runs[r].name + " (mean)", true);
  }
  return lines;
}

std::string config_summary(const nlohmann::json& c) {
  if (!c.is_object()) return "";
  std::string out;
  auto add = [&](const char* key, const nlohmann::json& v) {
    out += out.empty() ? "" : ", ";
    out += key;
    out += " ";
    out += v.is_string() ? v.get<std::string>() : dump_json(v);
  };
  for (const char* key : {"model", "task", "seed"})
    if (c.contains(key)) add(key, c[key]);
  if (c.contains("train") && c["train"].is_object())
    for (const char* key : {"optimizer", "lr", "batch"})
      if (c["train"].contains(key)) add(key, c["train"][key]);
  return out;
}

}  // namespace

int cmd_plot(const Words& words) {
  Args args(words, {"help"}, {"out", "names", "title"});
  if (args.has("help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  const std::vector<std::string>& runs = args.positional();
  if (runs.empty()) throw UsageError("give at least one run directory (see --help)");
  const auto out = args.get("out");
  if (!out) throw UsageError("--out FILE.svg or FILE.html is required");
  auto ends_with = [&](const std::string& s) {
    return out->size() >= s.size() && out->compare(out->size() - s.size(), s.size(), s) == 0;
  };
  const bool html = ends_with(".html");
  if (!html && !ends_with(".svg"))
    throw UsageError("--out must end in .svg or .html, got " + quote(*out));
  std::vector<std::string> names;
  if (const auto given = args.get("names")) {
    std::stringstream in(*given);
    for (std::string n; std::getline(in, n, ',');) names.push_back(n);
    if (names.size() != runs.size())
      throw UsageError("--names gives " + std::to_string(names.size()) + " names for " +
                       std::to_string(runs.size()) + " runs");
  } else {
    for (const std::string& r : runs) names.push_back(default_name(r));
    // Two runs of the same directory name (seed1/log.jsonl in two folders): their paths instead.
    for (size_t i = 0; i < names.size(); ++i)
      if (std::count(names.begin(), names.end(), names[i]) > 1) names[i] = runs[i];
  }
  std::vector<RunCurves> curves;
  for (size_t i = 0; i < runs.size(); ++i) curves.push_back(read_run(runs[i], names[i]));
  std::string title = args.get("title").value_or("");
  if (title.empty())
    for (const std::string& n : names) title += (title.empty() ? "" : " vs ") + n;

  const std::vector<Panel> panels = panels_of(curves);
  std::vector<std::string> charts;
  const int chart_height = std::max(240, 50 + 15 * int(2 * curves.size()));  // room for legends
  const int total_height = 30 + int(panels.size()) * (chart_height + 10);
  for (const Panel& p : panels) {
    ChartSpec spec;
    spec.title = p.title;
    spec.x_label = "step";
    spec.y_label = p.y_label;
    spec.log_y = p.log_y;
    spec.width = 900;
    spec.height = chart_height;
    charts.push_back(line_chart_svg(spec, lines_of(p, curves)));
  }
  std::ostringstream page;
  if (html) {
    page << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" << html_escape(title)
         << "</title>\n<style>body{font-family:sans-serif;margin:2em}td{padding:0 1em 0 0}"
            "</style></head><body>\n<h1>"
         << html_escape(title) << "</h1>\n<table>\n";
    for (const RunCurves& r : curves)
      page << "<tr><td><b>" << html_escape(r.name) << "</b></td><td>" << html_escape(r.path)
           << "</td><td>" << html_escape(config_summary(r.config)) << "</td></tr>\n";
    page << "</table>\n";
    for (const std::string& c : charts) page << "<div>" << c << "</div>\n";
    page << "</body></html>\n";
  } else {
    page << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"" << total_height
         << "\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>"
         << "<text x=\"10\" y=\"20\" font-size=\"15\" font-weight=\"bold\">" << html_escape(title)
         << "</text>\n";
    int y = 30;
    for (size_t i = 0; i < charts.size(); ++i) {
      page << "<g transform=\"translate(0," << y << ")\">\n" << charts[i] << "</g>\n";
      y += chart_height + 10;
    }
    page << "</svg>\n";
  }
  write_file_atomically(*out, page.str());
  std::cout << "wrote " << *out << " (" << panels.size() << " panels, " << curves.size()
            << " runs)\n";
  return 0;
}

}  // namespace memgrad::cli
