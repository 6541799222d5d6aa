#include "tasks/example_scores.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "engine/quote.hpp"
#include "tasks/metrics.hpp"

namespace memgrad {
namespace {

constexpr const char* kHeader = "record_id,split,label,score";

[[noreturn]] void bad(const std::string& path, std::size_t line, const std::string& what) {
  throw metrics::DataError(path + ":" + std::to_string(line) + ": " + what);
}

}  // namespace

std::string example_scores_csv(const std::vector<ExampleScore>& scores) {
  std::string out = std::string(kHeader) + "\n";
  char buf[64];
  for (const ExampleScore& s : scores) {
    std::snprintf(buf, sizeof buf, ",%d,%.17g\n", s.label, s.score);
    out += s.record_id + "," + s.split + buf;
  }
  return out;
}

std::size_t read_scores_csv(const std::string& path, const char* header, std::size_t fields,
                            const ScoresRow& row) {
  if (std::filesystem::is_directory(path))
    throw metrics::DataError(path + ": is a directory, not a scores file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw metrics::DataError(path + ": cannot open (" + std::strerror(errno) + ")");
  std::string text;
  std::size_t line = 0;
  std::vector<std::string> cells;
  while (std::getline(in, text)) {
    ++line;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (line == 1) {
      if (text != header)
        bad(path, line, "the header must be " + quote(header) + ", got " + quote(text));
      continue;
    }
    cells.clear();
    std::stringstream split(text);
    for (std::string cell; std::getline(split, cell, ',');) cells.push_back(cell);
    if (!text.empty() && text.back() == ',') cells.emplace_back();
    if (cells.size() != fields)
      bad(path, line,
          "expected " + std::to_string(fields) + " fields (" + header + "), got " +
              std::to_string(cells.size()) + " in " + quote(text));
    row(line, cells);
  }
  if (line == 0) throw metrics::DataError(path + ": empty file (no header)");
  return line;
}

double parse_score(const std::string& path, std::size_t line, const std::string& field) {
  char* end = nullptr;
  const double score = std::strtod(field.c_str(), &end);
  if (field.empty() || *end != '\0' || !std::isfinite(score))
    bad(path, line, "score must be a finite number, got " + quote(field));
  return score;
}

std::vector<ExampleScore> read_example_scores(const std::string& path) {
  std::vector<ExampleScore> out;
  std::set<std::pair<std::string, std::string>> seen;
  const std::size_t lines =
      read_scores_csv(path, kHeader, 4, [&](std::size_t line, const std::vector<std::string>& f) {
        ExampleScore s;
        s.record_id = f[0], s.split = f[1], s.line = line;
        if (s.record_id.empty() || s.split.empty()) bad(path, line, "empty record_id or split");
        if (f[2] != "0" && f[2] != "1") bad(path, line, "label must be 0 or 1, got " + quote(f[2]));
        s.label = f[2] == "1";
        s.score = parse_score(path, line, f[3]);
        if (!seen.emplace(s.split, s.record_id).second)
          bad(path, line,
              "record " + quote(s.record_id) + " of split " + quote(s.split) + " twice");
        out.push_back(std::move(s));
      });
  if (out.empty()) throw metrics::DataError(path + ":" + std::to_string(lines) + ": no example");
  return out;
}

}  // namespace memgrad
