// memgrad figure: one of the papers' interpretability figures (tools/figures/), drawn from one
// test sample of a trained run as the paper draws it.
#include <cmath>
#include <cstdio>
#include <iostream>

#include "engine/checkpoint.hpp"
#include "tools/args.hpp"
#include "tools/commands.hpp"
#include "tools/figures/figure.hpp"
#include "tools/run_dir.hpp"
#include "tools/trainer.hpp"

namespace memgrad::cli {
namespace {

const char* kHelp =
    "usage: memgrad figure NAME --checkpoint DIR [--sample N] --out FILE.svg|FILE.html\n"
    "       memgrad figure --list\n\n"
    "Draws one of the papers' interpretability figures from one test sample of a trained run\n"
    "(a run directory of `memgrad train`), as the paper draws it: axes, labels, the sample's\n"
    "input, target and prediction. FILE.svg is the figure alone; FILE.html a page with the\n"
    "sample's lines above it. Both are self-contained (no network). `memgrad inspect --html`\n"
    "pages carry the figures of their model too. docs/figures.md says how a model adds one.\n\n"
    "  --list          the figures: name, paper, the models and tasks each is drawn for\n"
    "  --sample N      test sample N of the run's task (default 0; sum2seq numbers its test\n"
    "                  sets in test_lmax order, babi its test questions in file order)\n"
    "  --data DIR      the data folder of a task that reads one (default: the run's)\n"
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

}  // namespace

int cmd_figure(const Words& words) {
  Args args(words, {"list", "help"}, {"checkpoint", "sample", "out", "data", "threads"});
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

  const RunDir dir{*dir_path};
  RunConfig rc = RunConfig::from_json(dir.read_json(dir.config()), dir.config());
  if (!figure_applies(info, rc.model, rc.task))
    throw UsageError("figure " + info.name + " is drawn for model " + join(info.models) +
                     (info.tasks.empty() ? "" : " on task " + join(info.tasks)) + "; " + *dir_path +
                     " is " + rc.model + " on " + rc.task);
  if (auto data = args.get("data")) rc.set_data_dir(*data);
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
  task.test_example(sample, rc.dtype, batch);

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
