// libFuzzer target: the PhysioNet/CinC 2012 text formats (tasks/physionet_record.hpp). Each input
// is parsed as a record (parse_record, its RecordID checked against 132539 when the input's
// length is odd, so both paths run) and, written to a file, as an outcomes file (read_outcomes).
// Bad input must be a memgrad::Error.
#include "engine/error.hpp"
#include "tasks/physionet_record.hpp"
#include "tests/fuzz/fuzz_util.hpp"

using namespace memgrad;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  physionet::Quirks quirks;
  try {
    const physionet::Record r =
        physionet::parse_record(text, "set-a/132539.txt", size % 2 ? 132539 : 0, quirks);
    (void)quirks.summary();
  } catch (const Error&) {
  }
  try {
    (void)physionet::read_outcomes(fuzz::write_file("Outcomes-a.txt", text));
  } catch (const Error&) {
  }
  return 0;
}
