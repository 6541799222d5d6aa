// Text files of the knowledge base (see kb_text.hpp).
#include "tasks/kb_text.hpp"

#include <fstream>
#include <sstream>

#include "engine/error.hpp"
#include "engine/quote.hpp"
#include "tasks/tar_gz.hpp"

namespace memgrad {

std::string read_text_file(const std::string& path) {
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0) return gunzip_file(path);
  std::ifstream in(path, std::ios::binary);
  MG_CHECK(in.good(), path, ": cannot open (missing or unreadable file)");
  std::ostringstream s;
  s << in.rdbuf();
  MG_CHECK(!in.bad(), path, ": read error");
  return std::move(s).str();
}

void for_each_line(std::string_view text, const std::string& path,
                   const std::function<void(int64_t, std::string_view)>& f) {
  int64_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    MG_CHECK(line.find('\0') == std::string_view::npos, path, ":", line_no,
             ": NUL byte (not a text file?)");
    f(line_no, line);
    pos = end + 1;
  }
}

std::vector<std::string> split_fields(std::string_view line, char sep, const std::string& path,
                                      int64_t line_no) {
  std::vector<std::string> out;
  size_t i = 0;
  while (true) {
    std::string field;
    if (i < line.size() && line[i] == '"') {
      ++i;
      bool closed = false;
      while (i < line.size()) {
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          closed = true;
          break;
        }
        field += line[i++];
      }
      MG_CHECK(closed, path, ":", line_no, ": quoted field not closed: ", quote(line));
      MG_CHECK(i == line.size() || line[i] == sep, path, ":", line_no,
               ": text after a quoted field's closing quote: ", quote(line));
    } else {
      const size_t end = line.find(sep, i);
      field.assign(
          line.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i));
      i = end == std::string_view::npos ? line.size() : end;
    }
    out.push_back(std::move(field));
    if (i >= line.size()) break;
    ++i;                     // the separator
    if (i == line.size()) {  // a trailing separator: one more, empty field
      out.emplace_back();
      break;
    }
  }
  return out;
}

}  // namespace memgrad
