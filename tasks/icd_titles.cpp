// ICD-10-CM titles (see icd_titles.hpp).
#include "tasks/icd_titles.hpp"

#include <fstream>
#include <sstream>
#include <vector>

#include "engine/error.hpp"
#include "engine/quote.hpp"
#include "tasks/tar_gz.hpp"

namespace memgrad::icd {
namespace {

// The fields of one CSV line; a double-quoted field may hold commas and "" for a quote. False for
// an unterminated quote.
bool split_csv(const std::string& line, std::vector<std::string>& fields) {
  fields.assign(1, "");
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return !quoted;
}

}  // namespace

std::string dotted_lower(const std::string& code) {
  std::string out;
  for (size_t i = 0; i < code.size(); ++i) {
    if (i == 3) out += '.';
    const char c = code[i];
    out += (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
  }
  return out;
}

std::map<std::string, Title> read_icd10cm_titles(const std::string& path) {
  std::string bytes;
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0) {
    bytes = gunzip_file(path);
  } else {
    std::ifstream in(path, std::ios::binary);
    MG_CHECK(in, path, ": cannot read");
    std::ostringstream s;
    s << in.rdbuf();
    bytes = s.str();
  }
  std::istringstream in(bytes);
  std::string line;
  std::vector<std::string> f;
  std::map<std::string, Title> titles;
  int64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    MG_CHECK(split_csv(line, f) && f.size() == 4, path, ":", number,
             ": expected 4 CSV fields (code,billable,short,long), got ", quote(line));
    if (number == 1 && f[0] == "code") continue;  // the header
    titles[dotted_lower(f[0])] = {f[2], f[3]};
  }
  MG_CHECK(!titles.empty(), path, ": no codes");
  return titles;
}

}  // namespace memgrad::icd
