// The run directory of `memgrad train`: config.json, log.jsonl, checkpoint.safetensors and
// metrics.json (and best.safetensors, best.json for tasks that select the best epoch). Every file
// but the append-only log is replaced atomically.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace memgrad::cli {

struct RunDir {
  std::string path;
  std::string config() const { return path + "/config.json"; }
  std::string log() const { return path + "/log.jsonl"; }
  std::string checkpoint() const { return path + "/checkpoint.safetensors"; }
  std::string metrics() const { return path + "/metrics.json"; }
  // The parameters of the epoch with the best validation score, and which epoch that was
  // (tools/model_selection.hpp); only for tasks that select.
  std::string best() const { return path + "/best.safetensors"; }
  std::string best_info() const { return path + "/best.json"; }
  // The parameters a finished run is evaluated with: best() when it exists, else checkpoint().
  std::string parameters() const;

  void create() const;  // mkdir -p; error naming the path on failure
  void write_json(const std::string& file, const nlohmann::json& j) const;
  nlohmann::json read_json(const std::string& file) const;
  void append_log(const nlohmann::json& line) const;
  // fsync of the log, so that the lines a checkpoint counts are on disk before it.
  void sync_log() const;
  // Cuts the log back to where a checkpoint left it: its first `lines` lines, or (lines < 0, a
  // checkpoint that did not count them) the lines of steps before `step`; the rest belong to work
  // the resume redoes. Every line must be a JSON object with a whole-number "step" (an Error names
  // file and line) but the last, which a kill or power loss may have cut short: a torn last line
  // is dropped. Returns the number of lines kept; adds to `notes` what the user should know (a
  // torn line dropped, lines missing).
  int64_t resume_log(int64_t step, int64_t lines, std::vector<std::string>& notes) const;
  // Removes the temporary files of killed writes (see remove_stale_temporaries); returns notes.
  std::vector<std::string> remove_stale_temporaries() const;
};

}  // namespace memgrad::cli
