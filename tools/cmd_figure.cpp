// memgrad figure: one of the papers' figures (tools/figures/), drawn from one test sample of a
// trained run as the paper draws it, or (figures of training curves) from the logs of the runs
// given.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "engine/checkpoint.hpp"
#include "engine/json_text.hpp"
#include "tools/args.hpp"
#include "tools/commands.hpp"
#include "tools/figures/figure.hpp"
#include "tools/run_dir.hpp"
#include "tools/test_sample.hpp"
#include "tools/trainer.hpp"

namespace memgrad::cli {
namespace {

const char* kHelp =
    "usage: memgrad figure NAME --checkpoint DIR [--sample N] [--set KEY=VALUE,...]\n"
    "                      --out FILE.svg|FILE.html\n"
    "       memgrad figure NAME --checkpoint DIR[,DIR...] --out FILE.svg|FILE.html\n"
    "       memgrad figure --list\n\n"
    "Draws one of the papers' interpretability figures from one test sample of a trained run\n"
    "(a run directory of `memgrad train`), as the paper draws it: axes, labels, the sample's\n"
    "input, target and prediction. FILE.svg is the figure alone; FILE.html a page with the\n"
    "sample's lines above it. Both are self-contained (no network). `memgrad inspect --html`\n"
    "pages carry the figures of their model too. docs/figures.md says how a model adds one.\n"
    "Figures of training curves (cmemnn-fig3: a validation score per epoch) are drawn from the\n"
    "log.jsonl of every run of a comma-separated --checkpoint list, one line per run, in the\n"
    "list's order; they take no --sample.\n\n"
    "  --list          the figures: name, paper, the models and tasks each is drawn for\n"
    "  --sample N      test sample N of the run's task (default 0; sum2seq numbers its test\n"
    "                  sets in test_lmax order, babi its test questions in file order,\n"
    "                  mimic-drugs its test admissions as `memgrad inspect` does)\n"
    "  --data DIR      the data folder of a task that reads one (default: the run's)\n"
    "  --set KEY=VALUE,...  a model setting other than the run's, as `memgrad eval --set`\n"
    "  --threads N     TBB threads";

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

void print_list() {
  for (const FigureInfo& f : all_figures())
    std::printf("%-18s %s\n%-18s   models: %s; tasks: %s\n%-18s   %s\n", f.name.c_str(),
                f.paper.c_str(), "", join(f.models).c_str(),
                f.tasks.empty() ? "any" : join(f.tasks).c_str(), "", f.summary.c_str());
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

void check_applies(const FigureInfo& info, const RunConfig& rc, const std::string& dir) {
  if (!figure_applies(info, rc.model, rc.task))
    throw UsageError("figure " + info.name + " is drawn for model " + join(info.models) +
                     (info.tasks.empty() ? "" : " on task " + join(info.tasks)) + "; " + dir +
                     " is " + rc.model + " on " + rc.task);
}

// A run's config.json, log.jsonl and metrics.json (when it has one); a line that is not a JSON
// object is an error naming file and line, but a torn last line (a run being written), which is
// skipped.
RunLog read_run_log(const std::string& dir_path) {
  const RunDir dir{dir_path};
  RunLog run{.path = dir_path, .config = dir.read_json(dir.config())};
  std::ifstream in(dir.log(), std::ios::binary);
  if (!in) throw UsageError(dir.log() + ": cannot open");
  std::string text;
  for (size_t line = 1; std::getline(in, text); ++line) {
    nlohmann::json j = parse_json_or_discarded(text);
    if (j.is_object()) {
      run.lines.push_back(std::move(j));
      continue;
    }
    if (in.peek() == EOF) break;  // torn last line
    throw UsageError(dir.log() + ":" + std::to_string(line) + ": not a JSON object");
  }
  if (std::filesystem::exists(dir.metrics())) run.metrics = dir.read_json(dir.metrics());
  return run;
}

int draw_run_figure(const FigureInfo& info, const std::string& list, const std::string& out) {
  std::vector<RunLog> runs;
  if (list.empty() || list.back() == ',')
    throw UsageError("empty run directory in --checkpoint " + list);
  std::stringstream in(list);
  for (std::string dir; std::getline(in, dir, ',');) {
    if (dir.empty()) throw UsageError("empty run directory in --checkpoint " + list);
    RunLog run = read_run_log(dir);
    check_applies(info, RunConfig::from_json(run.config, RunDir{dir}.config()), dir);
    runs.push_back(std::move(run));
  }
  const std::string svg = info.draw_runs(runs);
  std::string page = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" +
                     html_escape(info.paper) + "</title></head><body>\n<h1>" +
                     html_escape(info.paper) + "</h1>\n<p>" + html_escape(info.summary) +
                     "</p>\n<ul>\n";
  for (const RunLog& r : runs) page += "<li>" + html_escape(r.path) + "</li>\n";
  page +=
      "</ul>\n" + svg + (info.runs_page_body ? info.runs_page_body(runs) : "") + "</body></html>\n";
  write_file_atomically(
      out, ends_with(out, ".svg") ? "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + svg : page);
  std::cout << "wrote " << out << " (" << info.paper << ", " << runs.size() << " run"
            << (runs.size() == 1 ? "" : "s") << ")\n";
  return 0;
}

}  // namespace

int cmd_figure(const Words& words) {
  Args args(words, {"list", "help"}, {"checkpoint", "sample", "out", "data", "threads", "set"});
  if (args.has("help")) {
    std::puts(kHelp);
    return 0;
  }
  if (args.has("list")) {
    if (!args.positional().empty() || args.has("checkpoint") || args.has("out"))
      throw UsageError("--list takes no other argument");
    print_list();
    return 0;
  }
  if (args.positional().size() != 1)
    throw UsageError("give one figure NAME (memgrad figure --list shows them)");
  const FigureInfo& info = find_figure(args.positional().front());
  const auto dir_path = args.get("checkpoint");
  const auto out_path = args.get("out");
  if (!dir_path || dir_path->empty()) throw UsageError("--checkpoint DIR is required");
  if (!out_path || !(ends_with(*out_path, ".svg") || ends_with(*out_path, ".html")))
    throw UsageError("--out FILE.svg or --out FILE.html is required");
  const long sample = args.get_int("sample", 0);
  if (sample < 0) throw UsageError("--sample must be >= 0");
  threads_option(args);
  if (info.draw_runs) {
    if (args.has("sample")) throw UsageError("figure " + info.name + " takes no --sample");
    if (args.has("set")) throw UsageError("figure " + info.name + " takes no --set");
    return draw_run_figure(info, *dir_path, *out_path);
  }

  const RunDir dir{*dir_path};
  RunConfig rc = RunConfig::from_json(dir.read_json(dir.config()), dir.config());
  check_applies(info, rc, *dir_path);
  if (auto data = args.get("data")) rc.set_data_dir(*data);
  if (auto settings = args.get_list("set")) rc.override_model_settings(*settings);
  rc.train["shards"] = 1;      // one sample, one tape
  rc.train["iterations"] = 1;  // (the Trainer wants a length; nothing is trained)
  rc.train["epochs"] = 0;
  Trainer trainer(rc);
  trainer.load_parameters_from(dir.parameters());
  Task& task = trainer.task();
  if (sample >= task.test_examples())
    throw UsageError("--sample " + std::to_string(sample) + " out of range: the task has " +
                     std::to_string(task.test_examples()) + " test samples");
  Batch batch;
  load_test_sample(task, trainer.model(), sample, rc.dtype, batch);

  Tape tape;
  Trace trace;
  ForwardOptions opts;
  opts.training = false;
  opts.teacher_forcing = false;  // as evaluated: the decoder is fed its own predictions
  opts.trace = &trace;
  const ForwardResult out = trainer.model().forward(tape, batch, opts);
  FigureInput in{.model = rc.model,
                 .task = rc.task,
                 .source = "test sample " + std::to_string(sample),
                 .trained = true,
                 .sample = task.describe_example(batch, out.predictions.value()),
                 .series = group_trace(trace),
                 .observed = task.step_observations(batch)};
  const std::string svg = info.draw(in);
  write_file_atomically(*out_path, ends_with(*out_path, ".svg")
                                       ? "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + svg
                                       : figure_page(info, in, svg));
  std::cout << "wrote " << *out_path << " (" << info.paper << ", " << rc.model << " on " << rc.task
            << ", test sample " << sample << ")\n";
  return 0;
}

}  // namespace memgrad::cli
