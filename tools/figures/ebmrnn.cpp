// The EBmRNN paper's figures (Chakraborty et al. 2020, Figs. 2 and 3) as `memgrad figure` names;
// tools/memory_figures draws them (and the variables panel) on `memgrad inspect --html` pages.
#include "tools/figures/figure.hpp"
#include "tools/memory_figures.hpp"

namespace memgrad::cli {
namespace {

const bool kRegistered = [] {
  const std::vector<std::string> models = {"ebmrnn", "emrnn"};
  register_figure(
      {.name = "ebmrnn-fig2",
       .paper = "EBmRNN (Chakraborty et al. 2020), Fig. 2",
       .summary = "explicit memory slot utilization: which event (its hour) each "
                  "explicit slot holds at every hour of the stay, evictions outlined",
       .models = models,
       .draw = [](const FigureInput& in) { return ebmrnn_figure_svg(2, in.series, in.observed); },
       .on_inspect_page = false});
  register_figure(
      {.name = "ebmrnn-fig3",
       .paper = "EBmRNN (Chakraborty et al. 2020), Fig. 3",
       .summary = "influence of the explicit memory: the read gate g_t of every hop "
                  "over the hours of the stay (1: explicit memory only)",
       .models = {"ebmrnn"},
       .draw = [](const FigureInput& in) { return ebmrnn_figure_svg(3, in.series, in.observed); },
       .on_inspect_page = false});
  return true;
}();

}  // namespace
}  // namespace memgrad::cli
