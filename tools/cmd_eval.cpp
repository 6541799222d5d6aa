// memgrad eval: re-evaluates a saved run on its task's test sets.
#include <cstdio>
#include <iostream>

#include "engine/checkpoint.hpp"
#include "engine/json_text.hpp"
#include "tools/args.hpp"
#include "tools/commands.hpp"
#include "tools/run_dir.hpp"
#include "tools/trainer.hpp"

namespace memgrad::cli {

int cmd_eval(const Words& words) {
  Args args(words, {"json", "help", "teacher-forcing"},
            {"checkpoint", "threads", "data", "scores", "set"});
  if (args.has("help")) {
    std::puts(
        "usage: memgrad eval --checkpoint DIR [--json] [--data DIR] [--threads N] "
        "[--teacher-forcing]\n"
        "                    [--scores FILE] [--set KEY=VALUE[,KEY=VALUE...]]\n\n"
        "Rebuilds the run's task and model from DIR/config.json, loads\n"
        "DIR/checkpoint.safetensors (DIR/best.safetensors, the best epoch's, when the task\n"
        "selects one) and prints the test metrics (a table, or JSON).\n"
        "Sequence decoders decode greedily, fed their own previous prediction; with\n"
        "--teacher-forcing they are fed the target instead, as in training.\n\n"
        "--set KEY=VALUE  evaluates with a model setting other than the run's, e.g. an\n"
        "               inference-only one (amn: inference_decisions=most_likely,\n"
        "               decode_banks=1). KEY must be one of the run's model settings\n"
        "               (config.json \"model_config\", or today's defaults) and VALUE of the same "
        "JSON type\n"
        "               (a bare word is a string); the JSON output lists the settings changed\n"
        "               under \"eval_settings\".\n\n"
        "--scores FILE  also writes every evaluated example's score (binary tasks with\n"
        "               per-example ids: physionet2012) as CSV with the header\n"
        "               record_id,split,label,score: one line per example of every split\n"
        "               the metrics cover (physionet2012: valid, test, set_b), the score\n"
        "               the model's logit with 17 significant digits. Written atomically\n"
        "               (a temporary file renamed into place). `memgrad metrics bootstrap`\n"
        "               reads it. Multi-label tasks (codiesp, codiesp-kb) write one line per\n"
        "               note and label instead, with the header record_id,split,code,gold,score\n"
        "               (the note's id, its split: test then dev, the label's code, its gold\n"
        "               0/1, the model's logit): tasks/label_scores.hpp. bAbI (the question\n"
        "               views) writes every question's answer instead, with the header\n"
        "               split,task,file,line,question,answer,predicted,correct (test, then\n"
        "               valid and train; the file and line the question was read from):\n"
        "               tasks/babi_answers.hpp.");
    return 0;
  }
  if (!args.positional().empty())
    throw UsageError("unexpected argument '" + args.positional().front() + "'");
  threads_option(args);
  const auto path = args.get("checkpoint");
  if (!path || path->empty()) throw UsageError("--checkpoint DIR is required");
  RunDir dir{*path};
  RunConfig rc = RunConfig::from_json(dir.read_json(dir.config()), dir.config());
  if (auto data = args.get("data")) rc.set_data_dir(*data);
  nlohmann::json changed = nlohmann::json::object();
  if (auto settings = args.get_list("set")) changed = rc.override_model_settings(*settings);
  Trainer trainer(rc);
  trainer.load_parameters_from(dir.parameters());
  nlohmann::json metrics = trainer.evaluate(args.has("teacher-forcing"));
  if (!changed.empty()) metrics["eval_settings"] = changed;
  if (auto scores = args.get("scores")) {
    if (scores->empty()) throw UsageError("--scores needs a file name");
    write_file_atomically(*scores, trainer.scores_csv());
  }
  if (args.has("json"))
    std::cout << dump_json(metrics, 2) << "\n";
  else
    std::cout << trainer.task().format_metrics(metrics);
  return 0;
}

}  // namespace memgrad::cli
