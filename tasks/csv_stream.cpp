// Streaming CSV records (see csv_stream.hpp).
#include "tasks/csv_stream.hpp"

#include <zlib.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "engine/error.hpp"
#include "engine/quote.hpp"

namespace memgrad {
namespace {

constexpr size_t kBufferBytes = 1 << 16;
constexpr size_t kMaxField = 1 << 20;  // no MIMIC field comes near; a runaway quote does
constexpr size_t kMaxFields = 4096;

bool same_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

}  // namespace

CsvReader::CsvReader(const std::string& path) : path_(path), buf_(kBufferBytes) {
  std::error_code ec;
  MG_CHECK(!std::filesystem::is_directory(path, ec), path, ": is a folder, not a CSV table");
  gzFile gz = gzopen(path.c_str(), "rb");
  MG_CHECK(gz != nullptr, path, ": cannot open (", std::strerror(errno), ")");
  gz_ = gz;
  gzbuffer(gz, unsigned(kBufferBytes));
  try {
    // A UTF-8 byte order mark before the header.
    refill();
    if (end_ >= 3 && std::memcmp(buf_.data(), "\xEF\xBB\xBF", 3) == 0) pos_ = 3;
    MG_CHECK(read_record(header_), path, ": empty file (no header)");
  } catch (...) {
    gzclose(gz);  // no destructor runs for an object whose constructor threw
    gz_ = nullptr;
    throw;
  }
  header_line_ = size_t(record_line_);
}

CsvReader::~CsvReader() {
  if (gz_) gzclose(static_cast<gzFile>(gz_));
}

void CsvReader::refill() {
  if (eof_) return;
  const int n = gzread(static_cast<gzFile>(gz_), buf_.data(), unsigned(buf_.size()));
  if (n < 0) {
    int code = 0;
    const char* msg = gzerror(static_cast<gzFile>(gz_), &code);
    fail(path_, ":", line_, ": cannot read (", code == Z_ERRNO ? std::strerror(errno) : msg, ")");
  }
  if (n == 0) {
    // gzread returns 0 both at the end and for a gzip stream cut short: tell them apart.
    int code = 0;
    const char* msg = gzerror(static_cast<gzFile>(gz_), &code);
    MG_CHECK(code == Z_OK, path_, ":", line_, ": corrupt or truncated gzip data (", msg, ")");
    eof_ = true;
  }
  pos_ = 0;
  end_ = size_t(n);
}

int CsvReader::get() {
  if (pos_ == end_) {
    refill();
    if (pos_ == end_) return -1;
  }
  return static_cast<unsigned char>(buf_[pos_++]);
}

// One record: a state machine over bytes. Fields are reused between records (their capacity
// stays), so a steady stream of rows allocates nothing.
bool CsvReader::read_record(std::vector<std::string>& out) {
  size_t n = 0;  // fields of this record so far
  auto field = [&]() -> std::string& {
    MG_CHECK(n < kMaxFields, path_, ":", record_line_, ": more than ", kMaxFields, " fields");
    if (out.size() <= n) out.emplace_back();
    out[n].clear();
    return out[n++];
  };
  int c = get();
  while (c == '\n' || c == '\r') {  // blank lines
    if (c == '\n') ++line_;
    c = get();
  }
  if (c < 0) return false;
  record_line_ = line_;
  std::string* f = &field();
  for (;;) {
    if (c == '"' && f->empty()) {
      // Quoted field: up to the closing quote; "" is a quote.
      const int64_t opened = line_;
      for (;;) {
        c = get();
        MG_CHECK(c >= 0, path_, ":", opened, ": column ", n, ": quoted field never closed");
        if (c == '"') {
          c = get();
          if (c != '"') break;
        }
        if (c == '\n') ++line_;
        f->push_back(char(c));
        MG_CHECK(f->size() <= kMaxField, path_, ":", opened, ": column ", n, ": field over ",
                 kMaxField, " bytes");
      }
      if (c == '\r') c = get();
      MG_CHECK(c == ',' || c == '\n' || c < 0, path_, ":", line_, ": column ", n,
               ": text after a closing quote (", quote(std::string(1, char(c))), ")");
    } else {
      while (c >= 0 && c != ',' && c != '\n') {
        MG_CHECK(c != '"', path_, ":", line_, ": column ", n, ": quote inside an unquoted field ",
                 quote(*f + '"'));
        f->push_back(char(c));
        MG_CHECK(f->size() <= kMaxField, path_, ":", line_, ": column ", n, ": field over ",
                 kMaxField, " bytes");
        c = get();
      }
      if (!f->empty() && f->back() == '\r' && c != ',') f->pop_back();  // CRLF
    }
    if (c == ',') {
      f = &field();
      c = get();
      continue;
    }
    if (c == '\n') ++line_;
    break;
  }
  out.resize(n);
  return true;
}

bool CsvReader::next() {
  if (!read_record(fields_)) return false;
  ++records_;
  if (fields_.size() != header_.size())
    fail(path_, ":", record_line_, ": ", fields_.size(), " fields, the header has ",
         header_.size());
  return true;
}

bool CsvReader::has_column(std::string_view name) const {
  for (const std::string& h : header_)
    if (same_name(h, name)) return true;
  return false;
}

size_t CsvReader::column(std::string_view name) const {
  for (size_t i = 0; i < header_.size(); ++i)
    if (same_name(header_[i], name)) return i;
  std::string names;
  for (const std::string& h : header_) names += (names.empty() ? "" : ", ") + h;
  fail(path_, ":", header_line_, ": no column ", quote(name), " (columns: ", names, ")");
}

void CsvReader::fail_at(size_t column, const std::string& problem) const {
  fail(path_, ":", record_line_, ": column ", column < header_.size() ? header_[column] : "?", ": ",
       problem);
}

}  // namespace memgrad
