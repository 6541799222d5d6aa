// memgrad inspect: one sample through a model, with everything it records on the way (gates,
// weightings, usage, memories, attention; models/model.hpp's Trace) shown over time, and
// optionally the tape of that forward and backward pass (op, shape, value and gradient norms).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>

#include "engine/checkpoint.hpp"
#include "engine/json_text.hpp"
#include "tools/args.hpp"
#include "tools/commands.hpp"
#include "tools/figures/figure.hpp"
#include "tools/grad_flow.hpp"
#include "tools/memory_figures.hpp"
#include "tools/run_dir.hpp"
#include "tools/tape_graph.hpp"
#include "tools/test_sample.hpp"
#include "tools/trace_view.hpp"
#include "tools/trainer.hpp"

namespace memgrad::cli {
namespace {

const char* kHelp =
    "usage: memgrad inspect --checkpoint DIR [options]\n"
    "       memgrad inspect --model NAME --task TASK [options] [any `memgrad train` flag]\n\n"
    "Runs one sample through a trained model (a run directory of `memgrad train`), or through a\n"
    "new model initialised from --seed, and prints what the model records on the way: the\n"
    "memory's gates and weightings, usage, read modes, states and attention, one row per time\n"
    "step (\"enc1/write_gate\" is encoder 1's write gate at each of its steps). Decoder rows\n"
    "count reads: in dmnc and dnc row tK is the read of output K's step (used for output K and\n"
    "the next input); wlas also attends once before its first output (row t0), so its row\n"
    "t(K+1) is output K's.\n\n"
    "  --sample N         test sample N of the task (default 0; sum2seq numbers its test sets\n"
    "                     in test_lmax order, babi its test questions in file order)\n"
    "  --input TEXT       a sample written out instead, e.g. sum2seq \"3 1 4 / 1 5 9\"\n"
    "  --only TEXT        only the series whose name contains TEXT (e.g. usage, enc1/); with\n"
    "                     --format, only the tape's part TEXT (e.g. enc/t1/memory) and the\n"
    "                     nodes it reads\n"
    "  --teacher-forcing  sequence decoders are fed the target, as in training (default: their\n"
    "                     own previous prediction, as in evaluation)\n"
    "  --tape             also print the tape of this forward pass and of the loss's backward\n"
    "                     pass: one line per node (op, shape, inputs, |value|, |gradient|)\n"
    "  --format dot|svg|json  with --tape: the tape as a graph instead (docs/inspect.md): a node\n"
    "                     per op (op, shape, |value|, |gradient|), parameters as leaves, edges\n"
    "                     in data-flow order, clusters by the model part that recorded the ops\n"
    "                     (enc1/t0/memory/allocation); svg runs Graphviz's dot\n"
    "  --out FILE         with --format: write the graph to FILE (default: standard output)\n"
    "  --grad-flow        the norm of the loss's gradient with respect to every recorded series\n"
    "                     at every step (state, memory: how far back gradients reach) and to\n"
    "                     every parameter; in the text, the JSON and (--html) as a chart\n"
    "  --json             print one JSON object (sample, loss, every series' values) instead\n"
    "  --html FILE        also write a self-contained HTML page of heatmaps, one per series;\n"
    "                     for models with an explicit memory (ebmrnn, emrnn) first the EBmRNN\n"
    "                     paper's figures: Fig. 2 (which event each slot holds at each step,\n"
    "                     evictions outlined, the events' variables), the variables x steps\n"
    "                     panel of the events kept, and Fig. 3 (the read gate g_t per hop);\n"
    "                     then the model's figures of `memgrad figure --list`\n"
    "  --data DIR         the data folder of a task that reads one\n"
    "  --set KEY=VALUE,.. with --checkpoint: a model setting other than the run's, as\n"
    "                     `memgrad eval --set` (amn: inference_decisions=most_likely)\n"
    "  --detect-anomaly   name the op that makes the first NaN or infinity\n"
    "  --threads N        TBB threads\n\n"
    "Recording turns the models' row packing off (every sample steps, ended ones are blended),\n"
    "so the tape is the unpacked graph; the values are the same (tests/models/test_dmnc.cpp).";

int64_t parse_sample(const std::string& text) {
  try {
    size_t used = 0;
    const long long n = std::stoll(text, &used);
    if (used == text.size() && n >= 0) return n;
  } catch (const std::exception&) {
  }
  throw UsageError("--sample must be a whole number >= 0, got '" + text + "'");
}

}  // namespace

int cmd_inspect(const Words& arguments) {
  Words words = arguments;
  const auto sample_text = take_option(words, "sample");
  const auto input = take_option(words, "input");
  const std::string only = take_option(words, "only").value_or("");
  const auto html = take_option(words, "html");
  const bool teacher_forcing = take_flag(words, "teacher-forcing");
  const bool show_tape = take_flag(words, "tape");
  const bool show_flow = take_flag(words, "grad-flow");
  const auto format = take_option(words, "format");
  // --out is the graph's file; without --format it stays the training option refused below.
  const auto out_file = format ? take_option(words, "out") : std::nullopt;
  const bool anomaly = take_flag(words, "detect-anomaly");
  const auto checkpoint_dir = take_option(words, "checkpoint");
  if (sample_text && input) throw UsageError("give --sample N or --input TEXT, not both");
  const int64_t sample = sample_text ? parse_sample(*sample_text) : 0;
  if (format && !show_tape) throw UsageError("--format draws the tape: give it with --tape");
  if (format && *format != "dot" && *format != "svg" && *format != "json")
    throw UsageError("--format must be dot, svg or json, got '" + *format + "'");

  std::optional<RunConfig> rc;
  std::string checkpoint;
  std::vector<std::string> given;  // run flags on the command line (without --checkpoint)
  bool json = false;
  if (checkpoint_dir) {
    Args args(words, {"json", "help"}, {"threads", "data", "set"});
    if (args.has("help")) {
      std::puts(kHelp);
      return 0;
    }
    if (!args.positional().empty())
      throw UsageError("unexpected argument '" + args.positional().front() + "'");
    threads_option(args);
    const RunDir dir{*checkpoint_dir};
    if (dir.path.empty()) throw UsageError("--checkpoint needs a run directory");
    rc = RunConfig::from_json(dir.read_json(dir.config()), dir.config());
    if (auto data = args.get("data")) rc->set_data_dir(*data);
    if (auto settings = args.get_list("set")) rc->override_model_settings(*settings);
    checkpoint = dir.parameters();
    json = args.has("json");
  } else {
    if (std::find(words.begin(), words.end(), "--help") != words.end()) {
      std::puts(kHelp);
      return 0;
    }
    if (std::none_of(words.begin(), words.end(), [](const std::string& w) {
          return w == "--model" || w.rfind("--model=", 0) == 0;
        }))
      throw UsageError("--checkpoint DIR or --model NAME is required (see --help)");
    nlohmann::json flags;
    rc = parse_run_flags(words, nullptr, nullptr, &flags);
    given = flags["given"].get<std::vector<std::string>>();
    // Training options mean nothing for one sample: refused rather than ignored.
    const std::string why = " is a training option; inspect runs one sample";
    const char* const shards[] = {"shards"};
    refuse_options(given, kRunOptions, why);
    refuse_options(given, shards, why);
    set_process_threads(flags["threads"].get<long>());
    json = flags["json"].get<bool>();
  }
  rc->train["shards"] = 1;      // one sample, one tape
  rc->train["iterations"] = 1;  // (the Trainer wants a length; nothing is trained)
  rc->train["epochs"] = 0;
  Trainer trainer(*rc);
  reject_task_set_flags(given, trainer);
  if (!checkpoint.empty()) trainer.load_parameters_from(checkpoint);
  Task& task = trainer.task();

  Batch batch;
  if (input) {
    task.text_example(*input, rc->dtype, batch);
  } else {
    MG_CHECK(task.test_examples() > 0, "task ", task.name(), " has no test samples to inspect");
    if (sample >= task.test_examples())
      throw UsageError("--sample " + std::to_string(sample) + " out of range: the task has " +
                       std::to_string(task.test_examples()) + " test samples (0 to " +
                       std::to_string(task.test_examples() - 1) + ")");
    load_test_sample(task, trainer.model(), sample, rc->dtype, batch);
  }

  Tape tape;
  tape.set_detect_anomaly(anomaly);
  tape.set_record_scopes(show_tape);  // the model parts, for the graph's clusters
  Trace trace;
  ForwardOptions opts;
  opts.training = false;
  opts.teacher_forcing = teacher_forcing;
  opts.trace = &trace;
  const ForwardResult out = trainer.model().forward(tape, batch, opts);
  const double loss = out.loss.value().at(0);
  if (!std::isfinite(loss))
    std::fprintf(
        stderr, "memgrad inspect: warning: the loss is %g%s\n", loss,
        anomaly ? "" : " (--detect-anomaly names the op that made the first NaN or infinity)");
  if (show_tape || show_flow) tape.backward(out.loss);
  const std::string source =
      input ? "input \"" + *input + "\"" : "test sample " + std::to_string(sample);
  if (format) {
    const TapeGraph graph = tape_graph(tape, only);
    const std::string title = rc->model + " on " + rc->task + ", " + source +
                              (only.empty() ? "" : ", part " + only) + ": " +
                              std::to_string(graph.nodes.size()) + " nodes";
    std::string text;
    if (*format == "json") {
      nlohmann::json j = tape_graph_json(graph);
      j["title"] = title;
      j["loss"] = loss;
      text = dump_json(j) + "\n";
    } else {
      text = tape_graph_dot(graph, title);
      if (*format == "svg") text = render_svg(text);
    }
    if (out_file) {
      write_file_atomically(*out_file, text);
      std::cerr << "wrote " << *out_file << " (" << graph.nodes.size() << " nodes, "
                << graph.edges.size() << " edges)\n";
    } else {
      std::cout << text;
    }
    return 0;
  }
  const Task::Lines lines = task.describe_example(batch, out.predictions.value());
  const std::vector<TraceSeries> all_series = group_trace(trace);
  const std::vector<TraceSeries> series = select_series(all_series, only);
  if (!only.empty() && series.empty())
    throw UsageError("--only '" + only + "' matches no series of model " + rc->model);
  std::optional<GradFlow> flow;
  if (show_flow) flow = grad_flow(tape, all_series);

  if (html) {
    const std::string title =
        rc->model + " on " + rc->task + ", " + source + (checkpoint.empty() ? " (untrained)" : "");
    Task::Lines page = lines;
    char text[64];
    std::snprintf(text, sizeof text, "%.6g", loss);
    page.emplace_back("loss", text);
    const FigureInput figure_input{.model = rc->model,
                                   .task = rc->task,
                                   .source = source,
                                   .trained = !checkpoint.empty(),
                                   .sample = lines,
                                   .series = group_trace(trace),
                                   .observed = task.step_observations(batch)};
    write_file_atomically(
        *html, render_html(title, page, series,
                           render_memory_figures(series, figure_input.observed) +
                               figures_html(figure_input) + (flow ? grad_flow_html(*flow) : "")));
  }
  if (json) {
    nlohmann::json j = series_json(series);
    nlohmann::json s = nlohmann::json::array();
    for (const auto& [key, value] : lines) s.push_back({key, value});
    j["model"] = rc->model;
    j["task"] = rc->task;
    j["source"] = source;
    j["trained"] = !checkpoint.empty();
    j["sample"] = s;
    j["loss"] = loss;
    if (flow) j["grad_flow"] = grad_flow_json(*flow);
    if (show_tape) {
      std::ostringstream t;
      tape.print(t);
      j["tape"] = t.str();
    }
    std::cout << dump_json(j) << "\n";
    return 0;
  }
  std::cout << rc->model << " on " << rc->task << ", " << source
            << (checkpoint.empty() ? " (untrained model, seed " + std::to_string(rc->seed) + ")"
                                   : "")
            << "\n";
  for (const auto& [key, value] : lines) std::cout << "  " << key << ": " << value << "\n";
  std::cout << "  loss: " << loss << "\n\n" << render_text(series);
  if (series.empty())
    std::cout << "(model " << rc->model << " records no gates, weightings or attention)\n";
  if (flow) std::cout << "\n" << grad_flow_text(*flow);
  if (show_tape) {
    std::cout << "\ntape (" << tape.size() << " nodes)\n";
    tape.print(std::cout);
  }
  if (html) std::cout << "\nwrote " << *html << "\n";
  return 0;
}

}  // namespace memgrad::cli
