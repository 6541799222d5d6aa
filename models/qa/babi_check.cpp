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

void make_babi_story_check_batch(Rng& rng, DType dtype, Batch& batch) {
  make_babi_check_batch(rng, dtype, batch);
  constexpr int64_t b = kCheckQuestions, q = 3, j = kCheckWords, vocab = kCheckVocab;
  const int64_t counts[b] = {2, 1, 3};
  const int64_t at[b][q] = {{2, 4, 0}, {2, 0, 0}, {1, 3, 3}};
  Tensor& questions = batch.field("questions", Shape{b, q, j}, dtype);
  Tensor& where = batch.field("question_at", Shape{b, q}, dtype);
  Tensor& answers = batch.field("answers", Shape{b, q}, dtype);
  Tensor& live = batch.field("question_mask", Shape{b, q}, dtype);
  for (int64_t s = 0; s < b; ++s)
    for (int64_t k = 0; k < q; ++k) {
      // Padding rows get words and answers too: a model that read them would show it.
      for (int64_t w = 0; w < j - (k == 1 ? 1 : 0); ++w)
        questions.set((s * q + k) * j + w, double(1 + rng.below(uint64_t(vocab - 1))));
      answers.set(s * q + k, double(1 + rng.below(uint64_t(vocab - 1))));
      where.set(s * q + k, double(at[s][k]));
      live.set(s * q + k, k < counts[s] ? 1 : 0);
    }
}

}  // namespace memgrad::qa
