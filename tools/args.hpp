// Command-line arguments shared by every memgrad subcommand: `--name value`, `--flag`, and
// positional words. A subcommand declares the options it knows; anything else is a usage error, and
// so is an option given twice (no "last one wins").
#pragma once
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace memgrad::cli {

// Bad usage or bad input: the message is printed and the program exits with code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Args {
 public:
  // `flags` are options that take no value (e.g. "json"); every other `--name` takes one value.
  Args(const std::vector<std::string>& words, const std::vector<std::string>& flags,
       const std::vector<std::string>& valued);

  bool has(const std::string& name) const { return values_.count(name) > 0; }
  std::string get(const std::string& name, const std::string& fallback) const;
  std::optional<std::string> get(const std::string& name) const;
  long get_int(const std::string& name, long fallback) const;
  double get_double(const std::string& name, double fallback) const;
  // A comma-separated value (`--scores a.csv,b.csv`) as its items, in order; nullopt when the
  // option is absent. UsageError naming the option when an item is empty (an empty value, a
  // leading, trailing or doubled comma): a stray comma is a typo, not a request for fewer items.
  std::optional<std::vector<std::string>> get_list(const std::string& name) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

// For a command that hands the rest of its words to another parser (parse_run_flags): removes
// `--name value` or `--name=value` from words and returns the value (UsageError when the value is
// missing, or the option is given twice) ...
std::optional<std::string> take_option(std::vector<std::string>& words, const std::string& name);
// ... and the `--name` flag, true if it was there (UsageError if twice).
bool take_flag(std::vector<std::string>& words, const std::string& name);

// Parses "--threads N" (default: all cores) and applies it to TBB and OpenBLAS for the process.
int threads_option(const Args& args);
// Applies a thread count (0 = all cores) for the rest of the process; returns the count in use.
int set_process_threads(long n);

}  // namespace memgrad::cli
