// Attention over a bAbI story, the models of models/qa/:
//  - memn2n-hops: the MemN2N paper's Fig. 2 (Sukhbaatar et al. 2015): the story's sentences in
//    order, the probability p of each sentence at every hop, the question, answer and prediction.
//    (The paper also marks the supporting facts; the babi memory view does not keep them.)
//  - dmn-plus-episodes: DMN+'s attention gates over the facts at each episodic-memory pass
//    (Xiong et al. 2016), in the same layout.
//  - entnet-gates: EntNet's memory gates (Henaff et al. 2017): for each sentence, how much each
//    memory slot is updated (Eq. 2), and the output's attention over the slots.
#include <algorithm>
#include <cstdio>

#include "engine/error.hpp"
#include "tools/figures/babi_lines.hpp"
#include "tools/figures/figure.hpp"
#include "tools/figures/svg_draw.hpp"

namespace memgrad::cli {
namespace {

// One column per series step (or per series, for hops recorded as separate series), one row per
// sentence in story order.
std::string story_table(const FigureInput& in, const std::string& figure, const std::string& title,
                        const std::vector<std::string>& columns,
                        const std::vector<const std::vector<double>*>& weights) {
  const std::vector<StorySentence> sentences = babi_story(in, figure);
  WeightTable t;
  t.title = title + " (" + in.model + ", " + in.source + ")";
  t.row_title = "story";
  t.columns = columns;
  bool probabilities = true;
  for (const StorySentence& s : sentences) {
    t.row_labels.push_back(std::to_string(t.row_labels.size() + 1) + ". " + s.text);
    std::vector<double> row;
    for (const auto* w : weights) {
      MG_CHECK(s.memory >= 0 && size_t(s.memory) < w->size(), "figure ", figure, ": memory ",
               s.memory, " has no weight (", w->size(), " recorded)");
      row.push_back((*w)[size_t(s.memory)]);
      probabilities = probabilities && row.back() >= 0 && row.back() <= 1;
    }
    t.values.push_back(row);
  }
  t.notes = babi_outcome(in);
  if (!probabilities)  // MemN2N's linear start records the scores, before any softmax
    t.notes.push_back("weights outside [0, 1]: scores without softmax (e.g. a linear start)");
  return weight_table_svg(t);
}

std::string memn2n_hops(const FigureInput& in) {
  std::vector<std::string> columns;
  std::vector<const std::vector<double>*> weights;
  for (int hop = 1; const TraceSeries* s = in.find("hop" + std::to_string(hop) + "/attention");
       ++hop) {
    columns.push_back("hop " + std::to_string(hop));
    weights.push_back(&s->values.front());
  }
  MG_CHECK(!columns.empty(), "figure memn2n-hops: model ", in.model,
           " recorded no series 'hop1/attention'");
  return story_table(in, "memn2n-hops", "Attention p over the story at each hop", columns, weights);
}

std::string dmn_plus_episodes(const FigureInput& in) {
  const TraceSeries& a = in.get("dmn-plus-episodes", "episode/attention");
  std::vector<std::string> columns;
  std::vector<const std::vector<double>*> weights;
  for (size_t k = 0; k < a.values.size(); ++k) {
    columns.push_back("pass " + std::to_string(a.steps[k]));
    weights.push_back(&a.values[k]);
  }
  return story_table(in, "dmn-plus-episodes", "Attention gates over the facts at each pass",
                     columns, weights);
}

std::string entnet_gates(const FigureInput& in) {
  const TraceSeries& gate = in.get("entnet-gates", "gate");
  const std::vector<StorySentence> sentences = babi_story(in, "entnet-gates");
  MG_CHECK(gate.values.size() == sentences.size(), "figure entnet-gates: ", gate.values.size(),
           " gate steps for a story of ", sentences.size(), " sentences");
  WeightTable t;
  t.title = "Memory gates g_j per sentence (" + in.model + ", " + in.source + ")";
  t.row_title = "story (rows in reading order)";
  const size_t slots = gate.values.front().size();
  for (size_t j = 0; j < slots; ++j) t.columns.push_back("slot " + std::to_string(j));
  // The gate steps follow the story's reading order, which is the sentences' time order.
  for (size_t k = 0; k < sentences.size(); ++k) {
    t.row_labels.push_back(std::to_string(k + 1) + ". " + sentences[k].text);
    t.values.push_back(gate.values[k]);
  }
  if (const TraceSeries* a = in.find("attention")) {
    // [K], or [Q, K] for the questions of a story (per-story mode): a row per question.
    const std::vector<double>& p = a->values.front();
    const size_t rows = a->shape.rank == 2 ? size_t(a->shape[0]) : 1;
    MG_CHECK(p.size() == rows * slots, "figure entnet-gates: attention of shape ", a->shape,
             " for ", slots, " slots");
    for (size_t q = 0; q < rows; ++q) {
      t.row_labels.push_back(rows == 1 ? "output attention over the slots"
                                       : "output attention, question " + std::to_string(q + 1));
      t.values.emplace_back(p.begin() + std::ptrdiff_t(q * slots),
                            p.begin() + std::ptrdiff_t((q + 1) * slots));
    }
  }
  t.notes = babi_outcome(in);
  return weight_table_svg(t);
}

const bool kRegistered = [] {
  register_figure({.name = "memn2n-hops",
                   .paper = "MemN2N (Sukhbaatar et al. 2015), Fig. 2",
                   .summary = "the story's sentences in order and the attention probability p of "
                              "each at every hop, with the question, answer and prediction",
                   .models = {"memn2n"},
                   .tasks = {"babi"},
                   .draw = memn2n_hops});
  register_figure({.name = "dmn-plus-episodes",
                   .paper = "DMN+ (Xiong et al. 2016), attention gates per episode",
                   .summary = "the story's facts in order and the attention gate of each at "
                              "every pass of the episodic memory",
                   .models = {"dmn-plus"},
                   .tasks = {"babi"},
                   .draw = dmn_plus_episodes});
  register_figure({.name = "entnet-gates",
                   .paper = "EntNet (Henaff et al. 2017), memory gates",
                   .summary = "for each sentence of the story, the gate g_j of every memory slot "
                              "(how much the slot is rewritten), then the output's attention over "
                              "the slots",
                   .models = {"entnet"},
                   .tasks = {"babi"},
                   .draw = entnet_gates});
  return true;
}();

}  // namespace
}  // namespace memgrad::cli
