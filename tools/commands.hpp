// The memgrad subcommands. Each takes the words after its name, prints its own --help, and returns
// the process exit code (0 ok, 1 a check failed, 2 bad usage or bad input).
#pragma once
#include <string>
#include <vector>

namespace memgrad::cli {

using Words = std::vector<std::string>;

int cmd_gradcheck(const Words& words);
int cmd_bench(const Words& words);
int cmd_metrics(const Words& words);
int cmd_ehr_gen(const Words& words);  // the synthetic MIMIC-format EHR
int cmd_metrics_bootstrap(const Words& words);  // `memgrad metrics bootstrap`
int cmd_train(const Words& words);
int cmd_eval(const Words& words);
int cmd_inspect(const Words& words);
int cmd_babi_gen(const Words& words);
int cmd_plot(const Words& words);
int cmd_babi_generate(const Words& words);  // extended bAbI task 1 (tasks/babi_extended.hpp)
int cmd_figure(const Words& words);

}  // namespace memgrad::cli
