// Reading a CSV table record by record (RFC 4180: fields separated by commas, a field in double
// quotes may hold commas, line breaks and doubled quotes ""), from a plain or a gzip-compressed
// file: zlib's gzread inflates a gzip file and reads any other file as it is, so `TABLE.csv` and
// `TABLE.csv.gz` take the same path. Only one record is held at a time, whatever the file's size
// (MIMIC-III's PRESCRIPTIONS has 4.2 million rows).
//
// The first record is the header; columns are found by name, case-insensitively (MIMIC-III writes
// SUBJECT_ID, MIMIC-IV subject_id). Line endings LF or CRLF; a UTF-8 byte order mark and blank
// lines are skipped. Bad input throws memgrad::Error naming the file and line (and the column where
// there is one): an unreadable file, corrupt gzip data, a quote inside an unquoted field, text
// after a closing quote, a quoted field still open at the end of the file, a record with more or
// fewer fields than the header, a field over 1 MiB.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace memgrad {

class CsvReader {
 public:
  // Opens `path` and reads its header. Throws an Error "path: ..." for a missing or unreadable
  // file and a file without a header.
  explicit CsvReader(const std::string& path);
  ~CsvReader();
  CsvReader(const CsvReader&) = delete;
  CsvReader& operator=(const CsvReader&) = delete;

  // Reads the next record into fields(); false at the end of the file. Every record has as many
  // fields as the header (an Error otherwise).
  bool next();
  const std::vector<std::string>& fields() const { return fields_; }
  const std::string& field(size_t column) const { return fields_[column]; }

  const std::string& path() const { return path_; }
  const std::vector<std::string>& header() const { return header_; }
  // The 1-based line on which the current record starts (the header's is the first record's).
  int64_t line() const { return record_line_; }
  // Data records read so far.
  int64_t records() const { return records_; }

  // The index of the column called `name` (case-insensitive); an Error "path:line: no column
  // 'name' (columns: ...)" naming the header's line when there is none.
  size_t column(std::string_view name) const;
  // Whether there is one.
  bool has_column(std::string_view name) const;

  // Throws an Error "path:line: column NAME: problem" about the current record.
  [[noreturn]] void fail_at(size_t column, const std::string& problem) const;

 private:
  bool read_record(std::vector<std::string>& out);
  int get();  // next byte or -1 at the end
  void refill();

  std::string path_;
  void* gz_ = nullptr;  // gzFile
  std::vector<char> buf_;
  size_t pos_ = 0, end_ = 0;
  bool eof_ = false;
  int64_t line_ = 1, record_line_ = 0, records_ = 0;
  size_t header_line_ = 1;
  std::vector<std::string> header_, fields_;
};

}  // namespace memgrad
