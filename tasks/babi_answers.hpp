// Per-question answers of an evaluated bAbI model (`memgrad eval --scores FILE` on the babi task's
// question views): which questions a model gets wrong, to be read in their files.
//
// CSV with the header `split,task,file,line,question,answer,predicted,correct`, one line per
// question of every split evaluated (test, then valid, then train), each split's questions in
// file order: file the name of the file it was read from (no folder), line the question's 1-based
// line there, question its words as tokenised (lower case, punctuation dropped), answer and
// predicted words, correct 1 or 0. Task 8's lists and task 19's paths ("n,w") contain commas, so a
// field with a comma or a double quote is quoted (RFC 4180: "n,w").
#pragma once
#include <span>
#include <string>
#include <vector>

#include "tasks/babi.hpp"
#include "tasks/babi_view.hpp"

namespace memgrad::babi {

inline constexpr const char* kAnswersHeader =
    "split,task,file,line,question,answer,predicted,correct";

// One evaluated split's answers (any order: written in question order).
struct SplitAnswers {
  std::string name;  // "test", "valid", "train"
  Split split = Split::test;
  std::vector<Answered> answered;
};

// The CSV text, header included. An Error names a question answered twice or an index outside
// the split (a view that scored wrongly).
std::string answers_csv(const Data& data, std::span<const SplitAnswers> splits);

// A CSV field as written: quoted (inner quotes doubled) when it holds a comma, quote or newline.
std::string csv_field(const std::string& text);

}  // namespace memgrad::babi
