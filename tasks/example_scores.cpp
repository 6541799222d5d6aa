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

std::vector<ExampleScore> read_example_scores(const std::string& path) {
  if (std::filesystem::is_directory(path))
    throw metrics::DataError(path + ": is a directory, not a scores file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw metrics::DataError(path + ": cannot open (" + std::strerror(errno) + ")");
  std::vector<ExampleScore> out;
  std::set<std::pair<std::string, std::string>> seen;
  std::string text;
  std::size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (line == 1) {
      if (text != kHeader)
        bad(path, line, "the header must be " + quote(kHeader) + ", got " + quote(text));
      continue;
    }
    std::vector<std::string> fields;
    std::stringstream cells(text);
    for (std::string cell; std::getline(cells, cell, ',');) fields.push_back(cell);
    if (!text.empty() && text.back() == ',') fields.emplace_back();
    if (fields.size() != 4)
      bad(path, line,
          "expected 4 fields (record_id,split,label,score), got " + std::to_string(fields.size()) +
              " in " + quote(text));
    ExampleScore s;
    s.record_id = fields[0], s.split = fields[1], s.line = line;
    if (s.record_id.empty() || s.split.empty()) bad(path, line, "empty record_id or split");
    if (fields[2] != "0" && fields[2] != "1")
      bad(path, line, "label must be 0 or 1, got " + quote(fields[2]));
    s.label = fields[2] == "1";
    char* end = nullptr;
    s.score = std::strtod(fields[3].c_str(), &end);
    if (fields[3].empty() || *end != '\0' || !std::isfinite(s.score))
      bad(path, line, "score must be a finite number, got " + quote(fields[3]));
    if (!seen.emplace(s.split, s.record_id).second)
      bad(path, line, "record " + quote(s.record_id) + " of split " + quote(s.split) + " twice");
    out.push_back(std::move(s));
  }
  if (line == 0) throw metrics::DataError(path + ": empty file (no header)");
  if (out.empty()) throw metrics::DataError(path + ":" + std::to_string(line) + ": no example");
  return out;
}

}  // namespace memgrad
