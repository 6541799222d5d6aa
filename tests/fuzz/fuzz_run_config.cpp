// libFuzzer target: a run directory's config.json (tools/run_dir.hpp, RunConfig::from_json in
// tools/trainer.hpp), as `memgrad eval`, `inspect` and `train --resume` read it: the JSON, then
// the run settings against the registered models and tasks. Bad input must be a memgrad::Error.
#include "engine/error.hpp"
#include "tests/fuzz/fuzz_util.hpp"
#include "tools/run_dir.hpp"
#include "tools/trainer.hpp"

using namespace memgrad;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const cli::RunDir dir{fuzz::scratch_dir().string()};
  fuzz::write_file("config.json", fuzz::as_text(data, size));
  try {
    const cli::RunConfig config =
        cli::RunConfig::from_json(dir.read_json(dir.config()), dir.config());
    (void)config.to_json();
  } catch (const Error&) {
  }
  return 0;
}
