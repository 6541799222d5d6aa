// What the bAbI figures read of the `babi` task's sample lines (tasks/babi_view.cpp): the story's
// sentences ("memory I (time T)") and the question, answer and prediction under the figure.
#pragma once
#include <string>
#include <vector>

#include "tools/figures/figure.hpp"

namespace memgrad::cli {

struct StorySentence {
  int memory = 0;  // index into the model's memories (attention columns, trace steps)
  int time = 0;    // the sentence's age: 1 = the last sentence before the question
  std::string text;
};

// The story's sentences, first (oldest) first; an Error naming the figure when there are none.
std::vector<StorySentence> babi_story(const FigureInput& in, const std::string& figure);

// "question: ...", "answer: ...", "predicted: ...", "correct: ..." as the sample has them.
std::vector<std::string> babi_outcome(const FigureInput& in);

}  // namespace memgrad::cli
