// The DMNC paper's memory figures (Le et al. 2018, Figs. 3 and 4), drawn on sum2seq: the write
// gate g^w_t of memory M1 over view 1's events and of M2 over view 2's, one bar per event in input
// order ("how much the write gate allows an event to be written to the memory"). The paper draws
// them for a MIMIC-III patient's diagnoses and procedures; sum2seq's two views take their place.
#include <sstream>

#include "engine/error.hpp"
#include "tools/figures/figure.hpp"
#include "tools/figures/svg_draw.hpp"

namespace memgrad::cli {
namespace {

// Figure `name`: encoder `encoder`'s write gate at each step over the tokens of line `view`; a
// step after the last token is the view's end marker (sum2seq's `end_marker`).
std::string write_gate_figure(const FigureInput& in, const std::string& name,
                              const std::string& encoder, const std::string& view,
                              const std::string& memory) {
  const TraceSeries& gate = in.get(name, encoder + "/write_gate");
  std::vector<std::string> labels;
  std::istringstream words(in.line(name, view));
  for (std::string w; words >> w;) labels.push_back(w);
  const size_t steps = gate.values.size();
  MG_CHECK(steps == labels.size() || steps == labels.size() + 1, "figure ", name, ": ", steps,
           " write gates for the ", labels.size(), " events of ", view);
  if (steps > labels.size()) labels.push_back("end");
  BarChart chart;
  chart.title =
      memory + "'s write gate g^w_t over view " + view + " (" + in.model + ", " + in.source + ")";
  chart.x_labels = labels;
  for (const auto& v : gate.values) {
    MG_CHECK(v.size() == 1, "figure ", name, ": ", encoder, "/write_gate has ", v.size(),
             " values a step, expected 1");
    chart.values.push_back(v.front());
  }
  chart.x_title = "events of " + view + " in input order";
  chart.y_title = "write gate g^w_t";
  for (const char* key : {"target", "predicted", "correct"})
    for (const auto& [k, v] : in.sample)
      if (k == key) chart.notes.push_back(k + ": " + v);
  return bar_chart_svg(chart);
}

const bool kRegistered = [] {
  const std::vector<std::string> models = {"dmnc-late", "dmnc-early"};
  register_figure({.name = "dmnc-fig3",
                   .paper = "DMNC (Le et al. 2018), Fig. 3",
                   .summary = "M1's write gate g^w_t over the events of view 1 (x1), one bar per "
                              "event in input order; the paper's patient diagnoses are sum2seq's "
                              "first sequence here",
                   .models = models,
                   .tasks = {"sum2seq"},
                   .draw = [](const FigureInput& in) {
                     return write_gate_figure(in, "dmnc-fig3", "enc1", "x1", "M1");
                   }});
  register_figure({.name = "dmnc-fig4",
                   .paper = "DMNC (Le et al. 2018), Fig. 4",
                   .summary = "M2's write gate g^w_t over the events of view 2 (x2), one bar per "
                              "event in input order; the paper's procedures are sum2seq's second "
                              "sequence here",
                   .models = models,
                   .tasks = {"sum2seq"},
                   .draw = [](const FigureInput& in) {
                     return write_gate_figure(in, "dmnc-fig4", "enc2", "x2", "M2");
                   }});
  return true;
}();

}  // namespace
}  // namespace memgrad::cli
