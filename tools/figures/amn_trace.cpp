#include "tools/figures/amn_trace.hpp"

#include <algorithm>
#include <sstream>

#include "engine/error.hpp"
#include "tools/figures/babi_lines.hpp"

namespace memgrad::cli::amn_figure {
namespace {

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace

const std::vector<double>& at_step(const TraceSeries& s, int64_t step, const std::string& figure) {
  const auto it = std::find(s.steps.begin(), s.steps.end(), step);
  MG_CHECK(it != s.steps.end(), "figure ", figure, ": series '", s.name, "' has no sentence ",
           step);
  return s.values[size_t(it - s.steps.begin())];
}

Story read_story(const FigureInput& in, const std::string& figure) {
  const TraceSeries& words = in.get(figure, "words");
  const TraceSeries& banks = in.get(figure, "banks");
  MG_CHECK(banks.shape.rank == 2, "figure ", figure, ": series 'banks' of shape ", banks.shape,
           ", not [banks, entities]");
  Story st;
  st.banks = banks.shape[0];
  st.vocab = banks.shape[1];
  for (const StorySentence& line : babi_story(in, figure)) {
    const int memory = line.memory;
    const std::string& text = line.text;
    const std::vector<double>& sentence = at_step(words, memory, figure);
    at_step(banks, memory, figure);
    const std::vector<std::string> tokens = split_words(text);
    std::vector<int64_t> ids;
    for (const double id : sentence)
      if (id > 0) ids.push_back(int64_t(id));
    MG_CHECK(ids.size() == tokens.size(), "figure ", figure, ": sentence ", memory, " has ",
             ids.size(), " word ids for the ", tokens.size(), " words of \"", text, "\"");
    for (size_t w = 0; w < ids.size(); ++w) {
      MG_CHECK(ids[w] < st.vocab, "figure ", figure, ": word id ", ids[w], " outside the ",
               st.vocab, " entities of the banks");
      st.names[ids[w]] = tokens[w];
    }
    st.step.push_back(memory);
    st.text.push_back(text);
  }
  return st;
}

std::string name_of(const Story& st, int64_t id) {
  const auto it = st.names.find(id);
  if (it != st.names.end()) return it->second;
  std::string unknown = "#";  // (built in steps: g++ 12 warns falsely, -Wrestrict, on "#" + ...)
  unknown += std::to_string(id);
  return unknown;
}

bool member(const std::vector<double>& banks, int64_t vocab, int64_t m, int64_t e) {
  return banks[size_t(m * vocab + e)] >= 0.5;
}
bool exists_upper(const std::vector<double>& exists, int64_t m) {  // exists of m_1 .. m_{L-1}
  return m == 0 || exists[size_t(m - 1)] >= 0.5;
}

std::vector<int64_t> top_banks(const std::vector<double>& banks, int64_t l, int64_t v) {
  std::vector<int64_t> top(size_t(v), -1);
  for (int64_t m = 0; m < l; ++m)
    for (int64_t e = 1; e < v; ++e)
      if (member(banks, v, m, e)) top[size_t(e)] = m;
  return top;
}

std::string bank_label(int64_t m) { return "m_" + std::to_string(m); }

}  // namespace memgrad::cli::amn_figure
