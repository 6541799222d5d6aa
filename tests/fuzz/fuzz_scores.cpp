// libFuzzer target: the two scores files of `memgrad eval --scores` as `memgrad metrics bootstrap`
// reads them (tasks/example_scores.hpp: one score per example; tasks/label_scores.hpp: one per
// note and label). Each input is read as both. Bad input must be a metrics::DataError; what reads
// must write back (example_scores_csv, label_scores_csv) to a file that reads as the same scores.
#include <cstdlib>
#include <string>
#include <vector>

#include "tasks/example_scores.hpp"
#include "tasks/label_scores.hpp"
#include "tasks/metrics.hpp"
#include "tests/fuzz/fuzz_util.hpp"

using namespace memgrad;

namespace {

void check_examples_round_trip(const std::string& path) {
  const std::vector<ExampleScore> read = read_example_scores(path);
  const std::vector<ExampleScore> again =
      read_example_scores(fuzz::write_file("again.csv", example_scores_csv(read)));
  if (again.size() != read.size()) std::abort();
  for (size_t i = 0; i < read.size(); ++i)
    if (again[i].record_id != read[i].record_id || again[i].split != read[i].split ||
        again[i].label != read[i].label || again[i].score != read[i].score)
      std::abort();
}

void check_labels_round_trip(const std::string& path) {
  const std::vector<LabelScoreSplit> read = read_label_scores(path);
  const std::vector<LabelScoreSplit> again =
      read_label_scores(fuzz::write_file("again.csv", label_scores_csv(read)));
  if (again.size() != read.size()) std::abort();
  for (size_t s = 0; s < read.size(); ++s)
    if (again[s].name != read[s].name || again[s].codes != read[s].codes ||
        again[s].records != read[s].records || again[s].gold != read[s].gold ||
        again[s].scores != read[s].scores)
      std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_file("scores.csv", fuzz::as_text(data, size));
  try {
    check_examples_round_trip(path);
  } catch (const metrics::DataError&) {
  }
  try {
    check_labels_round_trip(path);
  } catch (const metrics::DataError&) {
  }
  return 0;
}
