#include "tools/run_dir.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "engine/checkpoint.hpp"
#include "engine/error.hpp"
#include "engine/json_text.hpp"
#include "engine/quote.hpp"

namespace memgrad::cli {

std::string RunDir::parameters() const {
  return std::filesystem::exists(best()) ? best() : checkpoint();
}

void RunDir::create() const {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  MG_CHECK(!ec, "cannot create run directory ", path, ": ", ec.message());
}

void RunDir::write_json(const std::string& file, const nlohmann::json& j) const {
  write_file_atomically(file, dump_json(j, 2) + "\n");
}

nlohmann::json RunDir::read_json(const std::string& file) const {
  check_not_directory(file);
  std::ifstream in(file);
  MG_CHECK(in.good(), "cannot read ", file, " (is ", path, " a memgrad run directory?)");
  try {
    return parse_json(in);
  } catch (const nlohmann::json::exception& e) {
    fail(file, ": invalid JSON: ", escape(e.what(), 200));
  }
}

void RunDir::append_log(const nlohmann::json& line) const {
  std::ofstream out(log(), std::ios::app);
  MG_CHECK(out.good(), "cannot append to ", log());
  out << dump_json(line) << '\n';
}

void RunDir::sync_log() const {
  const int fd = ::open(log().c_str(), O_WRONLY | O_APPEND);
  if (fd < 0 && errno == ENOENT) return;  // nothing logged yet
  MG_CHECK(fd >= 0, "cannot open ", log(), " to sync it: ", std::strerror(errno));
  const bool synced = ::fsync(fd) == 0;
  const std::string why = std::strerror(errno);
  ::close(fd);
  MG_CHECK(synced, "cannot sync ", log(), ": ", why);
}

int64_t RunDir::resume_log(int64_t step, int64_t lines, std::vector<std::string>& notes) const {
  std::ifstream in(log(), std::ios::binary);
  if (!in.good()) {
    if (lines > 0)
      notes.push_back(log() + " is missing (the checkpoint followed " + std::to_string(lines) +
                      " lines): the resumed run starts a new log");
    return 0;
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  struct Line {
    std::string text;
    int64_t step;
  };
  std::vector<Line> good;
  size_t begin = 0;
  int64_t number = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    const bool terminated = end != std::string::npos;
    if (!terminated) end = text.size();
    const std::string line = text.substr(begin, end - begin);
    begin = end + 1;
    ++number;
    if (line.empty()) continue;
    nlohmann::json j = parse_json_or_discarded(line);
    if (j.is_discarded() && !terminated) {
      // Written last and cut short: the write it belongs to never finished, and the checkpoint
      // (written after the lines it counts were synced) does not need it.
      notes.push_back(log() + ":" + std::to_string(number) + ": dropped a torn last line " +
                      quote(line) + " (a write cut short by a kill or power loss)");
      break;
    }
    // A step that is not a whole number in int64's range (a string, 1e300, 2^64 - 1) is refused.
    const bool whole_step =
        j.is_object() && j.contains("step") && j["step"].is_number_integer() &&
        !(j["step"].is_number_unsigned() &&
          j["step"].get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()));
    MG_CHECK(whole_step, log(), ":", number,
             ": not a log line (a JSON object with a whole-number \"step\"): ", quote(line));
    good.push_back({line, j["step"].get<int64_t>()});
  }
  std::ostringstream kept;
  int64_t count = 0;
  if (lines >= 0 && int64_t(good.size()) < lines)
    notes.push_back(log() + " has " + std::to_string(good.size()) + " of the " +
                    std::to_string(lines) +
                    " lines written before the checkpoint: the resumed run continues after them");
  for (const Line& l : good) {
    if (lines >= 0 ? count == lines : l.step >= step) break;
    kept << l.text << '\n';
    ++count;
  }
  write_file_atomically(log(), kept.str());
  return count;
}

std::vector<std::string> RunDir::remove_stale_temporaries() const {
  std::vector<std::string> notes;
  for (const std::string& file : {config(), log(), checkpoint(), metrics(), best(), best_info()})
    for (const std::string& removed : memgrad::remove_stale_temporaries(file))
      notes.push_back("removed " + removed + ", left by a write whose process was killed");
  return notes;
}

}  // namespace memgrad::cli
