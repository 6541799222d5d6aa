// libFuzzer target: a run directory's log.jsonl (tools/run_dir.hpp) as `memgrad train --resume`
// reads it: RunDir::resume_log cuts it back to where the checkpoint left it. The first byte picks
// how: its low 7 bits are the resumed step, its high bit says whether the checkpoint counted the
// lines (then that many lines, the step again). Bad input must be a memgrad::Error.
#include <string>
#include <vector>

#include "engine/error.hpp"
#include "tests/fuzz/fuzz_util.hpp"
#include "tools/run_dir.hpp"

using namespace memgrad;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const cli::RunDir dir{fuzz::scratch_dir().string()};
  fuzz::write_file("log.jsonl", fuzz::as_text(data, size));
  const int64_t step = size > 0 ? data[0] & 0x7f : 0;
  const int64_t lines = size > 0 && (data[0] & 0x80) ? step : -1;
  std::vector<std::string> notes;
  try {
    dir.resume_log(step, lines, notes);
  } catch (const Error&) {
  }
  return 0;
}
