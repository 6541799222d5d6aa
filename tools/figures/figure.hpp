// The papers' interpretability figures, one registered NAME each (`memgrad figure NAME`, and every
// figure of a model on `memgrad inspect --html` pages). A figure is drawn from what `inspect` sees
// of one sample: the task's lines about it (input, target, prediction) and the model's trace
// grouped into series (tools/trace_view.hpp). Each model's figures live in their own file in this
// folder and register themselves at start-up, the way models do (register_model); docs/figures.md
// says how to add one.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "tasks/task.hpp"
#include "tools/trace_view.hpp"

namespace memgrad::cli {

struct FigureInput {
  std::string model, task;
  std::string source;  // "test sample 3" or "input \"1 2 / 3 4\""
  bool trained = false;
  Task::Lines sample;               // the task's lines about the sample (describe_example)
  std::vector<TraceSeries> series;  // the whole trace, grouped (group_trace)
  Task::StepObservations observed;  // what each step observed (empty for most tasks)

  // The series named `name`, or an Error naming the figure and the model that lacks it.
  const TraceSeries& get(const std::string& figure, const std::string& name) const;
  const TraceSeries* find(const std::string& name) const;  // nullptr when absent
  // The value of the sample line `key`, or an Error naming the figure.
  const std::string& line(const std::string& figure, const std::string& key) const;
};

// What a figure drawn from training logs (not from one sample) sees of one run: its directory,
// config.json, the lines of its log.jsonl and its metrics.json (null for a run without one).
struct RunLog {
  std::string path;
  nlohmann::json config;
  std::vector<nlohmann::json> lines;
  nlohmann::json metrics;
};

struct FigureInfo {
  std::string name;                 // "dmnc-fig3", a word of the command line
  std::string paper;                // where the figure is: "DMNC (Le et al. 2018), Fig. 3"
  std::string summary;              // one line: what it shows (`memgrad figure --list`)
  std::vector<std::string> models;  // the models it is drawn for
  std::vector<std::string> tasks;   // the tasks it is drawn on (empty: any)
  // The figure as one standalone SVG document (xmlns set, no external resources).
  std::function<std::string(const FigureInput&)> draw;
  // Instead of draw, for a figure of the training logs or final metrics of one or more runs
  // (`memgrad figure NAME --checkpoint DIR[,DIR...]`, e.g. a validation score per epoch, one line
  // per run): never drawn on inspect pages.
  std::function<std::string(const std::vector<RunLog>&)> draw_runs;
  // Optional, with draw_runs: an HTML fragment under the figure on its page (FILE.html), e.g. the
  // figure's numbers as a table.
  std::function<std::string(const std::vector<RunLog>&)> runs_page_body;
  // Optional: the part of the figure's page (FILE.html) above the figure, in place of the table of
  // the sample's lines; "" keeps that table (the DMNC figures on mimic-drugs: the paper's Table 4).
  std::function<std::string(const FigureInput&)> page_body;
  // Drawn on `memgrad inspect --html` pages (false where the page draws it already).
  bool on_inspect_page = true;
};

void register_figure(FigureInfo info);
const std::vector<FigureInfo>& all_figures();  // in registration order
// The figure NAME, or a UsageError listing the names.
const FigureInfo& find_figure(const std::string& name);
// Whether `info` is drawn for this model on this task.
bool figure_applies(const FigureInfo& info, const std::string& model, const std::string& task);

// Every figure that applies to the input's model and task, each under a heading with its paper
// reference, as an HTML fragment for a page (`memgrad inspect --html`); "" when none applies.
std::string figures_html(const FigureInput& input);

// A self-contained page holding one figure: title, the sample's lines, the figure.
std::string figure_page(const FigureInfo& info, const FigureInput& input, const std::string& svg);

}  // namespace memgrad::cli
