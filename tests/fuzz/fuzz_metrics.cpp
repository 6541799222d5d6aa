// libFuzzer target: the matrix reader of `memgrad metrics` (tasks/metrics.hpp), each input read
// as CSV and as JSONL, then, when it reads, the labels and every metric of the table against
// itself. Bad input must be a DataError (or std::invalid_argument from the metrics, which the
// reader's checks should make unreachable for labels and finite scores).
#include <sstream>

#include "tasks/metrics.hpp"
#include "tests/fuzz/fuzz_util.hpp"

namespace mm = memgrad::metrics;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (const mm::Format format : {mm::Format::csv, mm::Format::jsonl}) {
    std::istringstream in{std::string(memgrad::fuzz::as_text(data, size))};
    try {
      const mm::Table table = mm::read_matrix(in, "fuzz", format);
      (void)mm::header_note(table);
      mm::check_same_shape(table, table);
      if (table.rows.size() * table.columns() > 4096) continue;  // keep each input fast
      const mm::LabelMatrix labels = mm::to_labels(table);
      (void)mm::evaluate_multilabel(labels, table.rows, 0.5, {1, 2, 5});
    } catch (const mm::DataError&) {
    }
  }
  return 0;
}
