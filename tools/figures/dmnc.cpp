// The DMNC paper's memory figures (Le et al. 2018, Figs. 3 and 4): the write gate g^w_t of memory
// M1 over view 1's events and of M2 over view 2's, one bar per event in input order ("how much the
// write gate allows an event to be written to the memory"). The paper draws them for a MIMIC-III
// patient's diagnoses (by priority) and procedures (in the order performed), which is what they
// show on a mimic-drugs run: one bar per code, labelled by the code and its dictionary title, the
// page (FILE.html) holding the paper's Table 4 for the admission (drug_case.hpp). On
// mimic-progression (the paper's Table 5 task, which it draws no gates for) they show the same
// over a patient's admission, after the patient's earlier admissions (a persistent memory holds
// them). On sum2seq the two number sequences take the views' place.
#include <algorithm>
#include <sstream>

#include "engine/error.hpp"
#include "tools/figures/drug_case.hpp"
#include "tools/figures/figure.hpp"
#include "tools/figures/svg_draw.hpp"

namespace memgrad::cli {
namespace {

// The gate values of `encoder`, one a step, checked against the `events` the steps read (one more
// step: the view's end marker).
std::vector<double> gate_values(const FigureInput& in, const std::string& name,
                                const std::string& encoder, size_t events,
                                const std::string& view) {
  const TraceSeries& gate = in.get(name, encoder + "/write_gate");
  const size_t steps = gate.values.size();
  MG_CHECK(steps == events || steps == events + 1, "figure ", name, ": ", steps,
           " write gates for the ", events, " events of ", view);
  std::vector<double> values;
  for (const auto& v : gate.values) {
    MG_CHECK(v.size() == 1, "figure ", name, ": ", encoder, "/write_gate has ", v.size(),
             " values a step, expected 1");
    values.push_back(v.front());
  }
  return values;
}

// Figure `name` on sum2seq: encoder `encoder`'s write gate at each step over the tokens of line
// `view`; a step after the last token is the view's end marker (sum2seq's `end_marker`).
std::string write_gate_figure(const FigureInput& in, const std::string& name,
                              const std::string& encoder, const std::string& view,
                              const std::string& memory) {
  std::vector<std::string> labels;
  std::istringstream words(in.line(name, view));
  for (std::string w; words >> w;) labels.push_back(w);
  BarChart chart;
  chart.values = gate_values(in, name, encoder, labels.size(), view);
  if (chart.values.size() > labels.size()) labels.push_back("end");
  chart.title =
      memory + "'s write gate g^w_t over view " + view + " (" + in.model + ", " + in.source + ")";
  chart.x_labels = labels;
  chart.x_title = "events of " + view + " in input order";
  chart.y_title = "write gate g^w_t";
  for (const char* key : {"target", "predicted", "correct"})
    for (const auto& [k, v] : in.sample)
      if (k == key) chart.notes.push_back(k + ": " + v);
  return bar_chart_svg(chart);
}

// Figure `name` on a mimic-drugs admission: the write gate of `encoder` over its diagnoses
// (dx) or procedures, each bar labelled by the code and its title.
std::string mimic_gate_figure(const FigureInput& in, const std::string& name,
                              const std::string& encoder, bool dx, const std::string& memory) {
  const DrugCase c = read_drug_case(in, name);
  const std::vector<CodeLabel>& codes = dx ? c.diagnoses : c.procedures;
  const std::string view = dx ? "diagnoses" : "procedures";
  BarChart chart;
  chart.values = gate_values(in, name, encoder, codes.size(), view);
  bool unseen = false;
  for (const CodeLabel& code : codes) {
    chart.x_labels.push_back(code.code +
                             (code.unseen && code.code != "<unseen>" ? " [unseen]" : ""));
    chart.x_details.push_back(code.title);
    unseen = unseen || code.unseen;
  }
  if (chart.values.size() > codes.size()) {
    chart.x_labels.push_back("end");
    chart.x_details.push_back("");
  }
  chart.title = memory + "'s write gate g^w_t over the admission's " + view + " (" + in.model +
                ", " + in.source + ")";
  chart.x_title = dx ? "diagnosis codes by priority (SEQ_NUM)"
                     : "procedure codes in the order performed (SEQ_NUM)";
  chart.y_title = "write gate g^w_t";
  chart.notes.push_back(view + ": " + (dx ? c.diagnoses_note : c.procedures_note));
  if (unseen)
    chart.notes.push_back(
        "[unseen], <unseen>: a code that no training admission has (the model "
        "reads one token for all of them)");
  chart.notes.push_back("drugs: " + c.correct + " of the model's top |Y| are true (the page, " +
                        "FILE.html, lists them: the paper's Table 4)");
  return bar_chart_svg(chart);
}

// Figure `name` on a mimic-progression admission: the write gate of `encoder` over its diagnoses
// (dx) or procedures, each bar labelled by the code as the task lists it ("A, B, C").
std::string progression_gate_figure(const FigureInput& in, const std::string& name,
                                    const std::string& encoder, bool dx,
                                    const std::string& memory) {
  const std::string view = dx ? "diagnoses" : "procedures";
  const std::string& list = in.line(name, view);
  BarChart chart;
  if (list != "(none)")
    for (size_t at = 0; at <= list.size();) {
      const size_t comma = std::min(list.find(", ", at), list.size());
      chart.x_labels.push_back(list.substr(at, comma - at));
      at = comma + 2;
    }
  chart.values = gate_values(in, name, encoder, chart.x_labels.size(), view);
  if (chart.values.size() > chart.x_labels.size()) chart.x_labels.push_back("end");
  chart.title = memory + "'s write gate g^w_t over the admission's " + view + " (" + in.model +
                ", " + in.source + ")";
  chart.x_title = dx ? "diagnosis codes by priority (SEQ_NUM)"
                     : "procedure codes in the order performed (SEQ_NUM)";
  chart.y_title = "write gate g^w_t";
  for (const char* key : {"patient", "next admission", "top 5 (model)", "top 5 (history)"})
    chart.notes.push_back(std::string(key) + ": " + in.line(name, key));
  return bar_chart_svg(chart);
}

std::string draw(const FigureInput& in, const std::string& name, int view) {
  const bool first = view == 1;
  const std::string encoder = first ? "enc1" : "enc2", memory = first ? "M1" : "M2";
  if (in.task == "mimic-drugs") return mimic_gate_figure(in, name, encoder, first, memory);
  if (in.task == "mimic-progression")
    return progression_gate_figure(in, name, encoder, first, memory);
  return write_gate_figure(in, name, encoder, first ? "x1" : "x2", memory);
}

std::string case_page(const FigureInput& in, const std::string& name) {
  return in.task == "mimic-drugs" ? drug_case_html(in, name) : std::string();
}

const bool kRegistered = [] {
  const std::vector<std::string> models = {"dmnc-late", "dmnc-early"};
  const std::vector<std::string> tasks = {"sum2seq", "mimic-drugs", "mimic-progression"};
  register_figure({.name = "dmnc-fig3",
                   .paper = "DMNC (Le et al. 2018), Fig. 3",
                   .summary = "M1's write gate g^w_t over the events of view 1, one bar per event "
                              "in input order: on mimic-drugs the admission's diagnosis codes by "
                              "priority, named from D_ICD_DIAGNOSES (the page adds the paper's "
                              "Table 4); on mimic-progression a patient's admission, after the "
                              "earlier ones; on sum2seq its first sequence (x1)",
                   .models = models,
                   .tasks = tasks,
                   .draw = [](const FigureInput& in) { return draw(in, "dmnc-fig3", 1); },
                   .page_body = [](const FigureInput& in) { return case_page(in, "dmnc-fig3"); }});
  register_figure({.name = "dmnc-fig4",
                   .paper = "DMNC (Le et al. 2018), Fig. 4",
                   .summary = "M2's write gate g^w_t over the events of view 2, one bar per event "
                              "in input order: on mimic-drugs the admission's procedure codes in "
                              "the order performed, named from D_ICD_PROCEDURES (the page adds the "
                              "paper's Table 4); on mimic-progression a patient's admission, after "
                              "the earlier ones; on sum2seq its second sequence (x2)",
                   .models = models,
                   .tasks = tasks,
                   .draw = [](const FigureInput& in) { return draw(in, "dmnc-fig4", 2); },
                   .page_body = [](const FigureInput& in) { return case_page(in, "dmnc-fig4"); }});
  return true;
}();

}  // namespace
}  // namespace memgrad::cli
