// libFuzzer target: checkpoint files (engine/checkpoint.hpp), the safetensors header (8-byte
// length, JSON) and data. An input that loads must survive a save and a second load unchanged
// (names, order, shapes, dtypes, bytes, metadata). Bad input must be a memgrad::Error.
#include <cstring>

#include "engine/checkpoint.hpp"
#include "engine/error.hpp"
#include "tests/fuzz/fuzz_util.hpp"

using namespace memgrad;

namespace {

bool same(const TensorFile& a, const TensorFile& b) {
  if (a.metadata != b.metadata || a.tensors.size() != b.tensors.size()) return false;
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    const auto& [na, ta] = a.tensors[i];
    const auto& [nb, tb] = b.tensors[i];
    if (na != nb || ta.shape() != tb.shape() || ta.dtype() != tb.dtype() ||
        std::memcmp(ta.raw(), tb.raw(), ta.bytes()) != 0)
      return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_file("in.safetensors", fuzz::as_text(data, size));
  TensorFile loaded;
  try {
    loaded = load_safetensors(path);
  } catch (const Error&) {
    return 0;
  }
  const std::string again = (fuzz::scratch_dir() / "again.safetensors").string();
  save_safetensors(again, loaded);  // what loads must save: an Error here is a finding
  if (!same(loaded, load_safetensors(again))) std::abort();
  return 0;
}
