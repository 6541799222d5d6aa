// Per-label scores of an evaluated multi-label model (`memgrad eval --scores FILE` on the codiesp
// and codiesp-kb tasks), for the bootstrap over notes of multi-label metrics and the paired
// bootstrap of the difference between two models (`memgrad metrics bootstrap`). Plain C++.
//
// The file is CSV in long form with the header `record_id,split,code,gold,score`: one line per
// (note, label), each note's lines together and its labels in the label set's order, the notes of
// a split in the task's order (CodiEsp: by articleID), the splits one after the other (test, then
// dev). record_id is the note's id (CodiEsp's articleID), split its split, code the label's name
// (CodiEsp: the ICD-10 code as the data writes it, "r50.9"), gold 0 or 1, score the model's logit
// with 17 significant digits so that it reads back exactly. Every note of a split has the same
// labels in the same order. (The binary tasks' files, tasks/example_scores.hpp, have the header
// `record_id,split,label,score`: the header tells the two apart.)
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace memgrad {

inline constexpr const char* kLabelScoresHeader = "record_id,split,code,gold,score";

// One split of a file: notes x labels.
struct LabelScoreSplit {
  std::string name;
  std::vector<std::string> codes;           // the labels, in order
  std::vector<std::string> records;         // the notes' ids, in order
  std::vector<std::vector<int>> gold;       // [note][label] 0/1
  std::vector<std::vector<double>> scores;  // [note][label] logits
  std::vector<std::size_t> first_line;      // line of each note's first label (0: not read)
  // The file line of (note, label): the lines of a note are consecutive.
  std::size_t line(std::size_t note, std::size_t label) const { return first_line[note] + label; }
};

// The CSV text of the splits, header included.
std::string label_scores_csv(const std::vector<LabelScoreSplit>& splits);

// Reads a per-label scores file, its splits in file order. Throws metrics::DataError
// "path:line: problem" for a missing or unreadable file, a missing or different header, a line
// without exactly five fields, an empty record id, split or code, a gold value other than 0 or 1,
// a score that is not a finite number, a note whose lines are not together, a label twice for a
// note, a note whose labels differ from its split's first note's (name or order), a split whose
// lines are not together, or no line at all.
std::vector<LabelScoreSplit> read_label_scores(const std::string& path);

// Whether the file's first line is kLabelScoresHeader (false for a missing file).
bool is_label_scores_file(const std::string& path);

}  // namespace memgrad
