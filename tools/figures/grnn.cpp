// The GRNN paper's Fig. 4 (Vani, Jernite & Sontag 2017): a model's belief in a label as it reads
// a note, word by word. The paper draws one label over an extract of two MIMIC discharge
// summaries, colouring the words that raise or lower the belief; we draw, for one CodiEsp note,
// every gold label and the top predicted ones as rows of a heat map over all the note's words (as
// the model read them: tokenised, stop words dropped), each label named by its ICD-10 code and
// title. GRNN and BiGRNN: the grounded dimension g_{t,l} in [-1, 1] after word t (trace "t<t>/g");
// the GRU (text-gru), as the paper does for it, sigmoid(P h_t + b)_l in [0, 1] ("t<t>/p").
#include <algorithm>
#include <sstream>

#include "engine/error.hpp"
#include "tools/figures/figure.hpp"
#include "tools/figures/svg_draw.hpp"

namespace memgrad::cli {
namespace {

constexpr const char* kName = "grnn-fig4";
constexpr size_t kPredictedRows = 5;  // top predicted labels shown beside the gold ones

std::vector<int64_t> indices(const std::string& text) {
  std::vector<int64_t> out;
  std::istringstream in(text);
  for (int64_t v; in >> v;) out.push_back(v);
  return out;
}

std::string draw(const FigureInput& in) {
  const bool grounded = in.find("g") != nullptr;
  const TraceSeries& series = in.get(kName, grounded ? "g" : "p");
  std::vector<std::string> words;
  for (const auto& step : in.observed.steps) words.push_back(step.empty() ? "?" : step[0].first);
  MG_CHECK(words.size() == series.values.size(), "figure ", kName, ": ", series.values.size(),
           " steps of ", series.name, " for a note of ", words.size(), " words");
  // Rows: the gold labels (named in "gold labels", "; "-separated), then the top predicted ones
  // that are not gold ("predicted k": "probability  name[  (gold)]").
  const std::vector<int64_t> gold = indices(in.line(kName, "gold label indices"));
  const std::vector<int64_t> top = indices(in.line(kName, "predicted label indices"));
  std::vector<std::string> gold_names;
  if (!gold.empty()) {
    const std::string& all = in.line(kName, "gold labels");
    for (size_t at = 0; at <= all.size();) {
      const size_t end = std::min(all.find("; ", at), all.size());
      gold_names.push_back(all.substr(at, end - at));
      at = end + 2;
    }
  }
  MG_CHECK(gold_names.size() == gold.size(), "figure ", kName, ": ", gold.size(),
           " gold label indices for ", gold_names.size(), " gold label names");
  std::vector<std::pair<int64_t, std::string>> rows;
  for (size_t k = 0; k < gold.size(); ++k) rows.emplace_back(gold[k], gold_names[k] + "  [gold]");
  for (size_t r = 0; r < top.size() && r < kPredictedRows; ++r) {
    if (std::find(gold.begin(), gold.end(), top[r]) != gold.end()) continue;
    std::string text = in.line(kName, "predicted " + std::to_string(r + 1));
    const size_t name_at = text.find("  ");
    MG_CHECK(name_at != std::string::npos, "figure ", kName, ": predicted ", r + 1,
             " is not 'probability  name'");
    rows.emplace_back(top[r], text.substr(name_at + 2) + "  [predicted " + std::to_string(r + 1) +
                                  ", p " + text.substr(0, name_at) + "]");
  }
  BeliefMap map;
  map.title = std::string(grounded ? "Grounded belief g_t" : "Label probability") +
              " after every word (" + in.model + ", " + in.source + ")";
  map.columns = words;
  map.lo = grounded ? -1 : 0;
  map.hi = 1;
  map.scale_title = grounded ? "g_t (-1: absent, +1: present)" : "sigmoid(P h_t + b)";
  for (const auto& [label, name] : rows) {
    map.row_labels.push_back(svg_shortened(name, 90));
    std::vector<double> row;
    for (const auto& step : series.values) {
      MG_CHECK(label >= 0 && label < int64_t(step.size()), "figure ", kName, ": label index ",
               label, " beyond the ", step.size(), " values of ", series.name);
      row.push_back(step[size_t(label)]);
    }
    map.values.push_back(std::move(row));
  }
  for (const auto& [key, value] : in.sample)
    if (key == "document") map.notes.push_back("note " + value);
  map.notes.push_back(
      "words as the model read them (lower case, numbers folded, stop words and "
      "punctuation dropped); hover a cell for its value");
  return belief_map_svg(map);
}

const bool kRegistered = [] {
  register_figure({.name = kName,
                   .paper = "GRNN (Vani, Jernite & Sontag 2017), Fig. 4",
                   .summary = "each gold and top-5 predicted label's belief after every word of "
                              "a note (GRNN: grounded g_t; GRU: sigmoid(P h_t + b)), labels by "
                              "ICD-10 code and title; the paper draws one label over an extract",
                   .models = {"grnn", "bigrnn", "text-gru"},
                   .tasks = {"codiesp"},
                   .draw = draw});
  return true;
}();

}  // namespace
}  // namespace memgrad::cli
