// libFuzzer target: a run directory's log.jsonl (tools/run_dir.hpp) as `memgrad train --resume`
// reads it: RunDir::resume_log keeps the lines before the resumed step (a torn last line dropped).
// The step is taken from the input's first byte. Bad input must be a memgrad::Error.
#include "engine/error.hpp"
#include "tests/fuzz/fuzz_util.hpp"
#include "tools/run_dir.hpp"

using namespace memgrad;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const cli::RunDir dir{fuzz::scratch_dir().string()};
  fuzz::write_file("log.jsonl", fuzz::as_text(data, size));
  std::vector<std::string> notes;
  try {
    dir.resume_log(size > 0 ? data[0] : 0, /*lines=*/-1, notes);
  } catch (const Error&) {
  }
  return 0;
}
