// libFuzzer target: the bAbI text loader (tasks/babi.hpp). Each input is parsed with
// read_stream; an input that parses with at least two questions is also loaded as the train and
// test file of a task (vocabulary, split, memory windows) and its first questions are put in a
// batch. Bad input must be a memgrad::Error.
#include <sstream>

#include "engine/error.hpp"
#include "tasks/babi.hpp"
#include "tests/fuzz/fuzz_util.hpp"

using namespace memgrad;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  try {
    std::istringstream in{std::string(text)};
    const babi::RawFile file = babi::read_stream(in, "fuzz");
    if (file.questions.size() < 2) return 0;
    const std::string dir = std::string(babi::kDataFolder) + "/en/qa1_fuzz_";
    fuzz::write_file(dir + "train.txt", text);
    fuzz::write_file(dir + "test.txt", text);
    babi::LoadOptions options;
    options.data_dir = fuzz::scratch_dir().string();
    options.memory_size = 8;
    const babi::Data d = babi::load(options);
    Batch batch;
    std::vector<int64_t> first;
    for (int64_t i = 0; i < int64_t(d.test.size()) && i < 4; ++i) first.push_back(i);
    Rng rng(1, 1);
    babi::fill_batch(d, d.test, first, &rng, 0.1, DType::f32, batch);
  } catch (const Error&) {
  }
  return 0;
}
