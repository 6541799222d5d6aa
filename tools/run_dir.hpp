// The run directory of `memgrad train`: config.json, log.jsonl, checkpoint.safetensors and
// metrics.json (and best.safetensors, best.json for tasks that select the best epoch). Every file but the append-only log is replaced atomically.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

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
  // Drops log lines whose "step" is >= step (they belong to work a resume will redo).
  void truncate_log(int64_t step) const;
};

}  // namespace memgrad::cli
