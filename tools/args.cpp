#include "tools/args.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace memgrad::cli {
namespace {
// Joins message pieces (a stream, not string operator+, which trips a GCC 12 -Wrestrict false
// positive).
template <class... Parts>
std::string message(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}
}  // namespace

Args::Args(const std::vector<std::string>& words, const std::vector<std::string>& flags,
           const std::vector<std::string>& valued) {
  auto known = [](const std::vector<std::string>& list, const std::string& name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word.rfind("--", 0) != 0) {
      positional_.push_back(word);
      continue;
    }
    std::string name = word.substr(2);
    std::string value;
    bool inline_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inline_value = true;
    }
    // "Last one wins" would let a default placed first in a script silently override the user's
    // value placed after it, or the other way round: a repeat is a mistake to point out.
    if (values_.count(name))
      throw UsageError(message("option --", name, " is given twice (give each option once)"));
    if (known(flags, name)) {
      if (inline_value) throw UsageError(message("option --", name, " takes no value"));
      values_[name] = std::string(1, '1');
    } else if (known(valued, name)) {
      if (!inline_value) {
        if (i + 1 >= words.size()) throw UsageError(message("option --", name, " needs a value"));
        value = words[++i];
      }
      values_[name] = value;
    } else {
      throw UsageError(message("unknown option --", name, " (see --help)"));
    }
  }
}

namespace {
// Removes the first `--name value` or `--name=value` from words and returns its value.
std::optional<std::string> take_one(std::vector<std::string>& words, const std::string& flag) {
  for (auto it = words.begin(); it != words.end(); ++it) {
    if (*it == flag) {
      if (it + 1 == words.end()) throw UsageError(message("option ", flag, " needs a value"));
      std::string value = *(it + 1);
      words.erase(it, it + 2);
      return value;
    }
    if (it->rfind(flag + "=", 0) == 0) {
      std::string value = it->substr(flag.size() + 1);
      words.erase(it);
      return value;
    }
  }
  return std::nullopt;
}
}  // namespace

std::optional<std::string> take_option(std::vector<std::string>& words, const std::string& name) {
  const std::string flag = "--" + name;
  std::optional<std::string> value = take_one(words, flag);
  if (value && take_one(words, flag))
    throw UsageError(message("option ", flag, " is given twice (give each option once)"));
  return value;
}

bool take_flag(std::vector<std::string>& words, const std::string& name) {
  const auto end = std::remove(words.begin(), words.end(), "--" + name);
  const auto found = words.end() - end;
  words.erase(end, words.end());
  if (found > 1)
    throw UsageError(message("option --", name, " is given twice (give each option once)"));
  return found == 1;
}

std::string Args::get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

std::optional<std::string> Args::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

long Args::get_int(const std::string& name, long fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  char* end = nullptr;
  long v = std::strtol(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end != '\0')
    throw UsageError(message("option --", name, " expects a whole number, got '", it->second, "'"));
  return v;
}

double Args::get_double(const std::string& name, double fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  char* end = nullptr;
  double v = std::strtod(it->second.c_str(), &end);
  if (it->second.empty() || *end != '\0' || !std::isfinite(v))
    throw UsageError(message("option --", name, " expects a number, got '", it->second, "'"));
  return v;
}

std::optional<std::vector<std::string>> Args::get_list(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  const std::string& text = it->second;
  std::vector<std::string> items;
  for (size_t start = 0;;) {  // not getline: it drops a trailing empty item
    const size_t comma = text.find(',', start);
    items.push_back(text.substr(start, comma - start));
    if (items.back().empty())
      throw UsageError(message("option --", name,
                               " expects a comma-separated list without empty items, got '", text,
                               "'"));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

}  // namespace memgrad::cli

#include "engine/threads.hpp"

namespace memgrad::cli {

int threads_option(const Args& args) { return set_process_threads(args.get_int("threads", 0)); }

int set_process_threads(long n) {
  if (n < 0 || n > 1024)
    throw UsageError("--threads must be 0 (all cores) or 1 to 1024, got " + std::to_string(n));
  // One scope for the whole process: it lives until exit, like the command itself.
  static std::unique_ptr<ThreadScope> scope;
  scope = std::make_unique<ThreadScope>(int(n));
  return scope->threads();
}

}  // namespace memgrad::cli
