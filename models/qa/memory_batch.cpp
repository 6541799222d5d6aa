#include "models/qa/memory_batch.hpp"

#include "engine/error.hpp"
#include "models/layers/batch_fields.hpp"

namespace memgrad::qa {

MemoryBatch read_memory_batch(const Batch& batch, const std::string& model, int64_t sentence_len,
                              DType dtype, bool with_time) {
  const Tensor& story = layers::field(batch, model, "story", 3);
  const int64_t b = story.dim(0), m = story.dim(1), j = story.dim(2);
  MG_CHECK(j == sentence_len, model, ": batch field 'story' has sentences of ", j,
           " words, the model was built for sentence_len ", sentence_len);
  MG_CHECK(b >= 1 && m >= 1, model, ": batch field 'story' has shape ", story.shape());
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

}  // namespace memgrad::qa
