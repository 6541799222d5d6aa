// The C-MemNN paper's figures (Prakash et al. 2017, "Condensed Memory Networks for Clinical
// Diagnostic Inferencing") for the knowledge-base memory networks on codiesp-kb:
//  - cmemnn-fig3: Fig. 3, precision@5 on validation data per epoch, one line per run (the paper
//    draws the four models at 4 hops on MIMIC-III; ours are the runs given, from the dev_p_at_5
//    of their log.jsonl epoch lines);
//  - kb-hops: the addressing weights over the knowledge-base pages at every hop for one note
//    (softmax attention, or the gates σ(g_i) of gated addressing), pages named by code, title and
//    Disease Ontology names, the note's gold pages marked (the paper has no such figure; its
//    planning notes' bonus "addressing weights p_i over KB pages for one note").
#include <algorithm>
#include <cctype>
#include <cmath>

#include "engine/error.hpp"
#include "engine/json_text.hpp"
#include "tools/figures/figure.hpp"
#include "tools/figures/svg_draw.hpp"
#include "tools/svg_chart.hpp"

namespace memgrad::cli {
namespace {

const std::vector<std::string> kModels = {"memn2n-kb", "kv-memnn", "a-memnn", "c-memnn"};

// "r50.9" and "R509" alike: upper case, no dot.
std::string normal_code(const std::string& code) {
  std::string out;
  for (const char c : code)
    if (c != '.') out += char(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string first_word(const std::string& s) { return s.substr(0, s.find(' ')); }

std::string kb_hops(const FigureInput& in) {
  const char* figure = "kb-hops";
  std::vector<std::string> columns;
  std::vector<const std::vector<double>*> weights;
  std::string kind;
  for (int hop = 1;; ++hop) {
    const std::string h = "hop" + std::to_string(hop);
    const TraceSeries* s = in.find(h + "/gates");
    if (s) kind = "gates";
    if (!s && (s = in.find(h + "/attention"))) kind = "attention";
    if (!s) break;
    columns.push_back("hop " + std::to_string(hop));
    weights.push_back(&s->values.front());
  }
  MG_CHECK(!columns.empty(), "figure ", figure, ": model ", in.model,
           " recorded no series 'hop1/gates' or 'hop1/attention'");
  // The note's gold codes, from "CODE title; CODE title".
  std::vector<std::string> gold;
  const std::string& g = in.line(figure, "gold labels");
  for (size_t start = 0; start < g.size();) {
    const size_t end = std::min(g.find("; ", start), g.size());
    gold.push_back(normal_code(first_word(g.substr(start, end - start))));
    start = end + 2;
  }
  WeightTable t;
  t.title = (kind == "gates" ? "Gated addressing: gates σ(g_i) over the knowledge-base pages"
                             : "Attention p_i over the knowledge-base pages") +
            std::string(" at each hop (") + in.model + ", " + in.source + ")";
  t.row_title = "page (label: code, title [Disease Ontology names]); * = a gold label";
  t.columns = columns;
  for (size_t l = 0;; ++l) {
    const std::string key = "kb entry " + std::to_string(l);
    const auto it = std::find_if(in.sample.begin(), in.sample.end(),
                                 [&](const auto& kv) { return kv.first == key; });
    if (it == in.sample.end()) break;
    const bool is_gold =
        std::find(gold.begin(), gold.end(), normal_code(first_word(it->second))) != gold.end();
    t.row_labels.push_back((is_gold ? "* " : "") + it->second);
    std::vector<double> row;
    for (const auto* w : weights) {
      MG_CHECK(l < w->size(), "figure ", figure, ": page ", l, " has no weight (", w->size(),
               " recorded)");
      row.push_back((*w)[l]);
    }
    t.values.push_back(row);
  }
  MG_CHECK(!t.row_labels.empty(), "figure ", figure, ": task ", in.task,
           " gives no 'kb entry' lines");
  MG_CHECK(t.row_labels.size() == weights.front()->size(), "figure ", figure, ": ",
           t.row_labels.size(), " pages named, ", weights.front()->size(), " weights per hop");
  t.notes.push_back("note: " + in.line(figure, "document"));
  t.notes.push_back("gold: " + g);
  for (int r = 1; r <= 5; ++r)
    for (const auto& [k, v] : in.sample)
      if (k == "predicted " + std::to_string(r)) t.notes.push_back(k + ": " + v);
  return weight_table_svg(t);
}

// One line per run: dev P@5 (the epoch lines' dev_p_at_5) against the epoch.
std::string cmemnn_fig3(const std::vector<RunLog>& runs) {
  std::vector<ChartLine> lines;
  for (size_t r = 0; r < runs.size(); ++r) {
    const RunLog& run = runs[r];
    ChartLine line;
    const nlohmann::json& model = run.config.at("model_config");
    line.label = run.config.at("model").get<std::string>();
    if (model.contains("hops")) line.label += ", " + dump_json(model.at("hops")) + " hops";
    line.colour = int(r);
    line.markers = true;
    for (const nlohmann::json& j : run.lines) {
      if (!j.contains("epoch") || !j.contains("dev_p_at_5")) continue;
      line.x.push_back(j.at("epoch").get<double>());
      line.y.push_back(j.at("dev_p_at_5").is_number() ? j.at("dev_p_at_5").get<double>()
                                                      : std::nan(""));
    }
    MG_CHECK(!line.x.empty(), "figure cmemnn-fig3: ", run.path,
             "/log.jsonl has no epoch line with dev_p_at_5 (a run of codiesp-kb trained before "
             "the task logged it, or of fewer steps than an epoch)");
    lines.push_back(std::move(line));
  }
  ChartSpec spec;
  spec.title = "Dev P@5 per epoch, CodiEsp (C-MemNN Fig. 3: MIMIC-III, 4 hops)";
  spec.x_label = "epoch";
  spec.y_label = "dev P@5";
  spec.height = 320;
  return line_chart_svg(spec, lines);
}

const bool kRegistered = [] {
  register_figure({.name = "cmemnn-fig3",
                   .paper = "C-MemNN (Prakash et al. 2017), Fig. 3",
                   .summary = "precision@5 on the validation (dev) notes after every epoch, one "
                              "line per run given (the paper: the four models at 4 hops)",
                   .models = kModels,
                   .tasks = {"codiesp-kb"},
                   .draw_runs = cmemnn_fig3});
  register_figure({.name = "kb-hops",
                   .paper = "C-MemNN (Prakash et al. 2017), memory addressing per hop",
                   .summary = "the addressing weights over the knowledge-base pages at every "
                              "hop for one note (C-MemNN / A-MemNN: the gates σ(g_i); End-to-End, "
                              "KV: the softmax attention), pages named by code, title and Disease "
                              "Ontology names, gold labels starred, top predictions under it",
                   .models = kModels,
                   .tasks = {"codiesp-kb"},
                   .draw = kb_hops});
  return true;
}();

}  // namespace
}  // namespace memgrad::cli
