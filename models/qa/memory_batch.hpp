// The `babi` task's memory view (tasks/babi.hpp) as a bAbI model reads it: every field checked for
// presence, rank, shape and dtype, with Errors naming the model and the field. MemN2N, EntNet and
// DMN+ read their batches through it.
#pragma once
#include <cstdint>
#include <string>

#include "engine/batch.hpp"

namespace memgrad::qa {

struct MemoryBatch {
  const Tensor& story;        // [B, M, J]
  const Tensor* time;         // [B, M], or null when not asked for
  const Tensor& memory_mask;  // [B, M]
  const Tensor& query;        // [B, J]
  const Tensor& answer;       // [B]
  int64_t b, m, j;            // B questions, M memory slots, J words a sentence
};

// The fields story, (time with `with_time`), memory_mask, query and answer of `batch`, checked
// in that order: J must be `sentence_len`, B and M at least 1, the other fields' shapes must
// follow story's, and every field must be in `dtype`.
MemoryBatch read_memory_batch(const Batch& batch, const std::string& model, int64_t sentence_len,
                              DType dtype, bool with_time = false);

// The `babi` task's memory-story view (tasks/babi_memory_story.hpp): one sample per story.
struct StoryMemoryBatch {
  const Tensor& story;          // [B, M, J]
  const Tensor& memory_mask;    // [B, M]
  const Tensor& questions;      // [B, Q, J]
  const Tensor& question_at;    // [B, Q]: sentences before the question, in [0, M]
  const Tensor& answers;        // [B, Q]
  const Tensor& question_mask;  // [B, Q]
  int64_t b, m, q, j;           // B stories, M sentences, Q questions, J words a sentence
};

// The fields story, memory_mask, questions, question_at, answers and question_mask of `batch`,
// checked as read_memory_batch checks its fields; question_at must hold whole numbers in [0, M]
// on real questions.
StoryMemoryBatch read_story_memory_batch(const Batch& batch, const std::string& model,
                                         int64_t sentence_len, DType dtype);

}  // namespace memgrad::qa
