// What the AMN figures (tools/figures/amn_fig3.cpp, amn_fig4.cpp: the paper's Figs. 3 and 4) read
// of the model's trace (models/qa/amn.hpp lists what it records) and of the bAbI sample's lines:
// the story's sentences with their trace steps, the entities' names, and the banks of a step.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tools/figures/figure.hpp"

namespace memgrad::cli::amn_figure {

// The story as the model read it: its real sentences in reading order, each with the trace step
// that holds it and its text, and every entity's name.
struct Story {
  std::vector<int64_t> step;  // per sentence, its trace step (the model's sentence index)
  std::vector<std::string> text;
  std::map<int64_t, std::string> names;  // entity (word id) -> word
  int64_t banks = 0, vocab = 0;
};

// The sample's "memory M (time T)" lines give the sentences (M is the model's sentence index, the
// trace's step); the series "words" their word ids, zipped with the lines' words for the names.
// An Error naming the figure when a series is missing or does not match the lines.
Story read_story(const FigureInput& in, const std::string& figure);

// The series' values at `step`, or an Error naming the figure.
const std::vector<double>& at_step(const TraceSeries& s, int64_t step, const std::string& figure);

std::string name_of(const Story& st, int64_t id);  // the word, or "#id" when the story lacks it
std::string bank_label(int64_t m);                 // "m_2"

// Membership of entity e in bank m for one step's [L, V] banks; existence of bank m from the
// per-sentence series "exists" ([L - 1]: m_1 .. m_{L-1}; m_0 always exists).
bool member(const std::vector<double>& banks, int64_t vocab, int64_t m, int64_t e);
bool exists_upper(const std::vector<double>& exists, int64_t m);

// The highest bank holding each entity (-1: not in memory), for [L, V] banks.
std::vector<int64_t> top_banks(const std::vector<double>& banks, int64_t l, int64_t v);

}  // namespace memgrad::cli::amn_figure
