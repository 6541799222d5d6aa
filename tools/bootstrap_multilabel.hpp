// `memgrad metrics bootstrap` on per-label score files (tasks/label_scores.hpp, written by
// `memgrad eval --scores` on the codiesp tasks): percentile bootstrap over notes of macro AUC,
// micro AUC and P@k, and the paired interval of A - B (tasks/multilabel_bootstrap.hpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace memgrad::cli {

struct MultiLabelBootstrapRequest {
  std::vector<std::string> scores;  // model A's files (one or more)
  std::vector<std::string> versus;  // model B's (none: no comparison)
  std::string split = "test";
  int resamples = 1000;
  std::uint64_t seed = 1;
  double level = 0.95;
  int k = 5;
};

// The JSON report; a UsageError "FILE:LINE: problem" for bad files, a split absent from a file,
// and files that do not hold the same notes (ids, order), labels (codes, order) and gold values.
nlohmann::ordered_json multilabel_bootstrap(const MultiLabelBootstrapRequest& request);
// The name of a report's group `key` ("a", "b" or "difference") in a table: its file, "A (mean
// of N files)", or "A - B". Both kinds of report use it.
std::string bootstrap_group_name(const std::string& key, const nlohmann::ordered_json& group);
// The report as a table for a terminal.
void print_multilabel_bootstrap(const nlohmann::ordered_json& report);

}  // namespace memgrad::cli
