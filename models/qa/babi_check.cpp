#include "models/qa/babi_check.hpp"

namespace memgrad::qa {

nlohmann::json babi_check_dims() {
  return {{"vocab_size", kCheckVocab},
          {"sentence_len", kCheckWords},
          {"memory_size", kCheckMemorySize}};
}

void make_babi_check_batch(Rng& rng, DType dtype, Batch& batch) {
  const int64_t b = kCheckQuestions, m = kCheckMemories, j = kCheckWords, vocab = kCheckVocab;
  const int64_t counts[kCheckQuestions] = {4, 2, 3};
  const double times[kCheckQuestions][kCheckMemories] = {{4, 3, 2, 1}, {2, 1, 0, 0}, {4, 2, 1, 0}};
  Tensor& story = batch.field("story", Shape{b, m, j}, dtype);
  Tensor& time = batch.field("time", Shape{b, m}, dtype);
  Tensor& mask = batch.field("memory_mask", Shape{b, m}, dtype);
  Tensor& query = batch.field("query", Shape{b, j}, dtype);
  Tensor& answer = batch.field("answer", Shape{b}, dtype);
  for (int64_t s = 0; s < b; ++s) {
    for (int64_t k = 0; k < counts[s]; ++k) {
      const int64_t words = 1 + int64_t(rng.below(uint64_t(j)));  // 1..J words, then nil
      for (int64_t w = 0; w < words; ++w)
        story.set((s * m + k) * j + w, double(1 + rng.below(uint64_t(vocab - 1))));
      time.set(s * m + k, times[s][k]);
      mask.set(s * m + k, 1);
    }
    for (int64_t w = 0; w < j - (s == 1 ? 1 : 0); ++w)
      query.set(s * j + w, double(1 + rng.below(uint64_t(vocab - 1))));
    answer.set(s, double(1 + rng.below(uint64_t(vocab - 1))));
  }
  batch.size = b;
}

}  // namespace memgrad::qa
