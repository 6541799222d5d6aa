// Per-example scores of an evaluated model (`memgrad eval --scores FILE`), for analyses that need
// the scores rather than the metrics: bootstrap intervals and paired bootstraps of the difference
// between two models on the same examples (`memgrad metrics bootstrap`). Plain C++.
//
// The file is CSV with the header `record_id,split,label,score`, one example a line, in the
// task's evaluation order (each split in turn, its examples in record order): record_id the
// task's id of the example (PhysioNet: the RecordID), split the evaluated split ("valid", "test",
// "set_b"), label 0 or 1, score the model's score (a logit), written with 17 significant digits
// so that it reads back exactly.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace memgrad {

struct ExampleScore {
  std::string record_id, split;
  int label = 0;
  double score = 0;
  std::size_t line = 0;  // 1-based line in the file it was read from (0 when not read)
};

// The CSV text of `scores`, header included.
std::string example_scores_csv(const std::vector<ExampleScore>& scores);

// Reads a scores file; throws metrics::DataError "path:line: problem" for a missing or
// unreadable file, a missing or different header, a line without exactly four fields, an empty
// record id or split, a label other than 0 or 1, a score that is not a finite number, the same
// (split, record_id) twice, or no example at all.
std::vector<ExampleScore> read_example_scores(const std::string& path);

// The reading both kinds of scores file share (and tasks/label_scores.hpp): throws
// metrics::DataError "path: ..." for a directory, an unreadable or empty file, "path:1: ..." for a
// first line other than `header`; then calls row(line, fields) for every further line, split at
// commas (a CR before the newline dropped), which must have exactly `fields` fields ("path:line:
// expected N fields (HEADER), got M in '...'"). Returns the number of lines read, header included.
using ScoresRow = std::function<void(std::size_t line, const std::vector<std::string>& fields)>;
std::size_t read_scores_csv(const std::string& path, const char* header, std::size_t fields,
                            const ScoresRow& row);
// A score field as a finite number; throws metrics::DataError "path:line: score must be a finite
// number, got '...'" otherwise.
double parse_score(const std::string& path, std::size_t line, const std::string& field);

}  // namespace memgrad
