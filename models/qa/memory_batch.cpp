#include "models/qa/memory_batch.hpp"

#include <cmath>

#include "engine/error.hpp"
#include "models/layers/batch_fields.hpp"

namespace memgrad::qa {

namespace {

// The field story [B, M, J]: J must be sentence_len, B and M at least 1.
const Tensor& story_field(const Batch& batch, const std::string& model, int64_t sentence_len) {
  const Tensor& story = layers::field(batch, model, "story", 3);
  MG_CHECK(story.dim(2) == sentence_len, model, ": batch field 'story' has sentences of ",
           story.dim(2), " words, the model was built for sentence_len ", sentence_len);
  MG_CHECK(story.dim(0) >= 1 && story.dim(1) >= 1, model, ": batch field 'story' has shape ",
           story.shape());
  return story;
}

}  // namespace

MemoryBatch read_memory_batch(const Batch& batch, const std::string& model, int64_t sentence_len,
                              DType dtype, bool with_time) {
  const Tensor& story = story_field(batch, model, sentence_len);
  const int64_t b = story.dim(0), m = story.dim(1), j = story.dim(2);
  const Tensor* time = with_time ? &layers::field(batch, model, "time", 2) : nullptr;
  const Tensor& mask = layers::field(batch, model, "memory_mask", 2);
  const Tensor& query = layers::field(batch, model, "query", 2);
  const Tensor& answer = layers::field(batch, model, "answer", 1);
  if (time) layers::expect_shape(model, "time", *time, Shape{b, m});
  layers::expect_shape(model, "memory_mask", mask, Shape{b, m});
  layers::expect_shape(model, "query", query, Shape{b, j});
  layers::expect_shape(model, "answer", answer, Shape{b});
  for (const Tensor* t : {&story, time, &mask, &query, &answer})
    MG_CHECK(!t || t->dtype() == dtype, model, ": batch fields must be ", dtype_name(dtype),
             ", got ", dtype_name(t->dtype()));
  return {story, time, mask, query, answer, b, m, j};
}

StoryMemoryBatch read_story_memory_batch(const Batch& batch, const std::string& model,
                                         int64_t sentence_len, DType dtype) {
  const Tensor& story = story_field(batch, model, sentence_len);
  const int64_t b = story.dim(0), m = story.dim(1), j = story.dim(2);
  const Tensor& mask = layers::field(batch, model, "memory_mask", 2);
  const Tensor& questions = layers::field(batch, model, "questions", 3);
  const int64_t q = questions.dim(1);
  MG_CHECK(q >= 1, model, ": batch field 'questions' has shape ", questions.shape());
  const Tensor& at = layers::field(batch, model, "question_at", 2);
  const Tensor& answers = layers::field(batch, model, "answers", 2);
  const Tensor& live = layers::field(batch, model, "question_mask", 2);
  layers::expect_shape(model, "memory_mask", mask, Shape{b, m});
  layers::expect_shape(model, "questions", questions, Shape{b, q, j});
  layers::expect_shape(model, "question_at", at, Shape{b, q});
  layers::expect_shape(model, "answers", answers, Shape{b, q});
  layers::expect_shape(model, "question_mask", live, Shape{b, q});
  for (const Tensor* t : {&story, &mask, &questions, &at, &answers, &live})
    MG_CHECK(t->dtype() == dtype, model, ": batch fields must be ", dtype_name(dtype), ", got ",
             dtype_name(t->dtype()));
  for (int64_t i = 0; i < b * q; ++i) {
    const double p = at.at(i);
    MG_CHECK(live.at(i) == 0 || (p >= 0 && p <= double(m) && p == std::floor(p)), model,
             ": batch field 'question_at' holds ", p, ", not a sentence count in [0, ", m, "]");
  }
  return {story, mask, questions, at, answers, live, b, m, q, j};
}

}  // namespace memgrad::qa
