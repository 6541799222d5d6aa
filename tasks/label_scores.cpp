#include "tasks/label_scores.hpp"

#include <cstdio>
#include <deque>
#include <fstream>
#include <iterator>
#include <set>
#include <utility>

#include "engine/quote.hpp"
#include "tasks/example_scores.hpp"
#include "tasks/metrics.hpp"

namespace memgrad {
namespace {

[[noreturn]] void bad(const std::string& path, std::size_t line, const std::string& what) {
  throw metrics::DataError(path + ":" + std::to_string(line) + ": " + what);
}

// Adds one (record, code, gold, score) line to the split being read, checking that the note's
// lines are together and its labels those of the split's first note.
class SplitBuilder {
 public:
  SplitBuilder(const std::string& path, LabelScoreSplit& split) : path_(path), s_(split) {}

  void add(std::size_t line, const std::string& record, const std::string& code, int gold,
           double score) {
    const bool new_note = s_.records.empty() || s_.records.back() != record;
    if (new_note) {
      close_note(line);
      if (!seen_.insert(record).second)
        bad(path_, line,
            "record " + quote(record) + " of split " + quote(s_.name) +
                " again after other records (a note's lines must be together)");
      s_.records.push_back(record);
      s_.first_line.push_back(line);
      s_.gold.emplace_back();
      s_.scores.emplace_back();
    }
    const std::size_t j = s_.gold.back().size();
    if (s_.records.size() == 1) {
      for (const std::string& c : s_.codes)
        if (c == code)
          bad(path_, line, "label " + quote(code) + " twice for record " + quote(record));
      s_.codes.push_back(code);
    } else if (j >= s_.codes.size() || s_.codes[j] != code) {
      bad(path_, line,
          "label " + quote(code) + " of record " + quote(record) + " where record " +
              quote(s_.records.front()) + " (line " + std::to_string(s_.first_line.front()) +
              ") has " +
              (j < s_.codes.size() ? "label " + quote(s_.codes[j])
                                   : std::string("no more labels")) +
              " (every note of a split needs the same labels in the same order)");
    }
    s_.gold.back().push_back(gold);
    s_.scores.back().push_back(score);
  }
  // The note read last must have all the split's labels.
  void close_note(std::size_t next_line) const {
    if (s_.records.size() < 2 || s_.gold.back().size() == s_.codes.size()) return;
    bad(path_, next_line - 1,
        "record " + quote(s_.records.back()) + " has " + std::to_string(s_.gold.back().size()) +
            " labels, record " + quote(s_.records.front()) + " (line " +
            std::to_string(s_.first_line.front()) + ") " + std::to_string(s_.codes.size()));
  }

 private:
  const std::string& path_;
  LabelScoreSplit& s_;
  std::set<std::string> seen_;
};

}  // namespace

std::string label_scores_csv(const std::vector<LabelScoreSplit>& splits) {
  std::string out = std::string(kLabelScoresHeader) + "\n";
  char buf[64];
  for (const LabelScoreSplit& s : splits)
    for (std::size_t i = 0; i < s.records.size(); ++i)
      for (std::size_t j = 0; j < s.codes.size(); ++j) {
        std::snprintf(buf, sizeof buf, ",%d,%.17g\n", s.gold[i][j], s.scores[i][j]);
        out += s.records[i] + "," + s.name + "," + s.codes[j] + buf;
      }
  return out;
}

bool is_label_scores_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string first;
  if (!in || !std::getline(in, first)) return false;
  if (!first.empty() && first.back() == '\r') first.pop_back();
  return first == kLabelScoresHeader;
}

std::vector<LabelScoreSplit> read_label_scores(const std::string& path) {
  std::deque<LabelScoreSplit> out;  // (a deque: the builders hold references to its elements)
  std::vector<SplitBuilder> builders;
  const std::size_t lines = read_scores_csv(
      path, kLabelScoresHeader, 5, [&](std::size_t line, const std::vector<std::string>& f) {
        if (f[0].empty() || f[1].empty() || f[2].empty())
          bad(path, line, "empty record_id, split or code");
        if (f[3] != "0" && f[3] != "1") bad(path, line, "gold must be 0 or 1, got " + quote(f[3]));
        const double score = parse_score(path, line, f[4]);
        if (out.empty() || out.back().name != f[1]) {
          if (!builders.empty()) builders.back().close_note(line);
          for (const LabelScoreSplit& s : out)
            if (s.name == f[1])
              bad(path, line,
                  "split " + quote(f[1]) + " again after split " + quote(out.back().name) +
                      " (a split's lines must be together)");
          out.push_back(LabelScoreSplit{.name = f[1]});
          builders.emplace_back(path, out.back());
        }
        builders.back().add(line, f[0], f[2], f[3] == "1", score);
      });
  if (out.empty()) throw metrics::DataError(path + ":" + std::to_string(lines) + ": no note");
  builders.back().close_note(lines + 1);
  return {std::make_move_iterator(out.begin()), std::make_move_iterator(out.end())};
}

}  // namespace memgrad
