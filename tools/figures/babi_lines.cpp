#include "tools/figures/babi_lines.hpp"

#include <algorithm>
#include <cstdio>

#include "engine/error.hpp"

namespace memgrad::cli {

std::vector<StorySentence> babi_story(const FigureInput& in, const std::string& figure) {
  std::vector<StorySentence> out;
  for (const auto& [key, value] : in.sample) {
    StorySentence s;
    if (std::sscanf(key.c_str(), "memory %d (time %d)", &s.memory, &s.time) != 2) continue;
    s.text = value;
    out.push_back(s);
  }
  MG_CHECK(!out.empty(), "figure ", figure, ": task ", in.task, " gives no story lines (memory I)");
  std::sort(out.begin(), out.end(),
            [](const StorySentence& a, const StorySentence& b) { return a.time > b.time; });
  return out;
}

std::vector<std::string> babi_outcome(const FigureInput& in) {
  std::vector<std::string> notes;
  // In the sample's order: "question", "answer", ... (a question a sample) or "question 1 (after
  // sentence 2)", "answer 1", ... (the memory-story view's several).
  for (const auto& [k, v] : in.sample)
    for (const char* key : {"question", "answer", "predicted", "correct"})
      if (k.rfind(key, 0) == 0) notes.push_back(k + ": " + v);
  return notes;
}

}  // namespace memgrad::cli
