// Reading the knowledge base's text files (doid.obo, the DO reports' TSVs, the ICD tables' gzipped
// CSVs): a whole file, its lines with their numbers, and the fields of a CSV or TSV line.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace memgrad {

// The bytes of a file; a file whose name ends in ".gz" is inflated (tasks/tar_gz.hpp). An Error
// names a missing or unreadable file.
std::string read_text_file(const std::string& path);

// Calls f(line number from 1, line without its '\n' and a '\r' before it) for every line of text.
// A NUL byte is an Error "path:line: NUL byte (not a text file?)".
void for_each_line(std::string_view text, const std::string& path,
                   const std::function<void(int64_t, std::string_view)>& f);

// The fields of one line separated by `sep` (',' or '\t'); a field that starts with '"' is quoted
// (RFC 4180: "" inside is one quote, separators inside are kept). An Error "path:line: ..." for
// a quoted field not closed or followed by something other than the separator.
std::vector<std::string> split_fields(std::string_view line, char sep, const std::string& path,
                                      int64_t line_no);

}  // namespace memgrad
