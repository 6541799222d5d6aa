// memgrad: one program, several subcommands (see `memgrad --help`).
#include <cstdio>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/blas_core.hpp"
#include "engine/error.hpp"
#include "tools/args.hpp"
#include "tools/commands.hpp"

namespace {

struct Command {
  const char* name;
  int (*run)(const memgrad::cli::Words&);
  const char* summary;
};

const Command kCommands[] = {
    {"train", memgrad::cli::cmd_train, "train a model on a task into a run directory"},
    {"eval", memgrad::cli::cmd_eval, "re-evaluate a saved run"},
    {"inspect", memgrad::cli::cmd_inspect,
     "one sample through a model: gates, weightings, memory over time; the tape"},
    {"plot", memgrad::cli::cmd_plot,
     "training curves of runs (log.jsonl), overlaid, as SVG or HTML"},
    {"figure", memgrad::cli::cmd_figure,
     "the papers' interpretability figures, drawn from a trained run (--list)"},
    {"gradcheck", memgrad::cli::cmd_gradcheck,
     "finite-difference gradient checks of ops and models"},
    {"bench", memgrad::cli::cmd_bench, "benchmarks: tape overhead, allocations, GEMM GFLOP/s"},
    {"babi-generate", memgrad::cli::cmd_babi_generate,
     "write extended bAbI task 1 (more entities, longer stories, several questions)"},
    {"metrics", memgrad::cli::cmd_metrics,
     "multi-label metrics (AUC, AP, F1, P@k) of score files; bootstrap intervals"},
    {"babi-gen", memgrad::cli::cmd_babi_gen, "generate bAbI task 1 or 3 stories (official format)"},
    {"ehr-gen", memgrad::cli::cmd_ehr_gen,
     "a synthetic EHR at MIMIC-III scale, written as MIMIC-III tables (task mimic-drugs)"},
};

void print_usage() {
  std::printf("usage: memgrad COMMAND [options]   (memgrad COMMAND --help for its options)\n\n");
  for (const Command& c : kCommands) std::printf("  %-10s %s\n", c.name, c.summary);
}

}  // namespace

int main(int argc, char** argv) {
  memgrad::reexec_with_better_blas_core(argv);  // see engine/blas_core.hpp
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    print_usage();
    return argc < 2 ? 2 : 0;
  }
  std::string name = argv[1];
  memgrad::cli::Words words(argv + 2, argv + argc);
  for (const Command& c : kCommands) {
    if (name != c.name) continue;
    try {
      return c.run(words);
    } catch (const memgrad::cli::UsageError& e) {
      std::fprintf(stderr, "memgrad %s: %s\n", c.name, e.what());
      return 2;
    } catch (const memgrad::Error& e) {
      std::fprintf(stderr, "memgrad %s: %s\n", c.name, e.what());
      return 2;
    } catch (const nlohmann::json::exception& e) {
      // JSON comes from the user's files (configs, checkpoints' metadata, metric rows); readers
      // name the file where they can, and whatever slips through is still bad input.
      std::fprintf(stderr, "memgrad %s: invalid JSON input: %s\n", c.name, e.what());
      return 2;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "memgrad %s: internal error: %s\n", c.name, e.what());
      return 3;
    }
  }
  std::fprintf(stderr, "memgrad: unknown command '%s'\n\n", name.c_str());
  print_usage();
  return 2;
}
