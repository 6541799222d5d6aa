// The `memory-story` view of bAbI (task setting babi_view = "memory-story"): the memory view's
// sentences, one sample per story with all its questions at their positions, for a model whose
// memory at a question depends only on the sentences before it (EntNet's per-story mode,
// docs/entnet.md; P1 notes section 3.3). One pass over a story then answers every question of it,
// instead of one pass over a window per question.
//
// Why a view (and not a model setting): a view owns what a sample is and which prediction answers
// which question (tasks/babi_view.hpp); the model only reads the fields. The view also sets the
// model's config key `per_story` to true (its model_dims, as it sets vocab_size), so
// `--babi-view memory-story` is the one switch; a model without that key (MemN2N, DMN+) is refused
// by name ("the task sets 'per_story'").
//
// Samples (built once per split from the loaded questions, in file order): the questions of one
// story whose whole story prefix fits the memory view's window (Example::before == count, i.e. at
// most memory_size statements before them) form one sample: the story's statements up to the last
// of them, each question at its position. A question whose prefix is longer than the window (qa3's
// stories of up to 224 statements, en-10k qa5's of 126, at the recipe's 70) is a sample of its own:
// its window, as the memory view gives it. So every question sees exactly the sentences the memory
// view gives it, and per-story and per-question predictions agree (a test checks it); qa3 is, in
// effect, per-question. A story the train/validation split cuts is a sample in each split.
//
// Batch fields (float dtype of the model, whole numbers; B samples, M = the most sentences of any
// sample of the batch (at least 1), Q = the most questions, J = sentence_len):
//   story          [B, M, J]  word ids of the sentences, oldest first, 0 = nil
//   memory_mask    [B, M]     1 on real sentences, 0 on padding
//   questions      [B, Q, J]  word ids of the questions, 0 = nil
//   question_at    [B, Q]     sentences of the sample before the question (1..M); 0 on padding
//   answers        [B, Q]     word id of the answer; 0 on padding
//   question_mask  [B, Q]     1 on real questions, 0 on padding
// Predictions are [B, Q, C] scores; padding rows are not read.
//
// Batches and epochs (the memory view counts questions): a training batch holds
// round(batch x samples / questions) samples (at least 1), about `batch` questions on average
// (batch 32 on en-10k task 1, 5 questions a story: 6 stories, 30 questions), and an epoch is
// questions / batch updates, as in the memory view. So the number of updates and the summed loss
// per update (EntNet's official "sum" loss) stay those of per-question training. Validation and
// test batches hold `batch` samples. No random noise: the temporal field is not given (EntNet
// does not read it).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <vector>

#include "tasks/babi_view.hpp"

namespace memgrad::babi {

// Sentences [first, first + length) of Data::sentences and the questions
// examples(split)[question .. question + questions).
struct StorySample {
  int64_t first = 0;
  int32_t length = 0;
  int64_t question = 0;
  int32_t questions = 0;
};

// The samples of one split's questions (the rule above).
std::vector<StorySample> story_samples(const std::vector<Example>& examples);

class MemoryStoryView : public View {
 public:
  explicit MemoryStoryView(const Data& data);
  nlohmann::json model_dims() const override;
  int64_t samples(Split split) const override;
  int64_t questions(Split split) const override;
  int64_t samples_per_batch(int64_t batch_size) const override;
  void fill(Split split, std::span<const int64_t> indices, Rng* noise, DType dtype,
            Batch& batch) const override;
  // The longest sample (the most sentences).
  int64_t largest_train_sample() const override;
  // The longest sample, then the one with the most questions, then the longest again: the padded
  // shapes [B, M, J] and [B, Q, J] of the largest batch any draw can make.
  void largest_train_indices(int64_t count, std::vector<int64_t>& indices) const override;
  void score(Split split, std::span<const int64_t> indices, const Tensor& predictions,
             TaskCounts& counts, std::vector<Answered>* answered) const override;
  Lines describe(const Batch& batch, const Tensor& predictions) const override;

 private:
  const std::vector<StorySample>& of(Split split) const;

  const Data& data_;
  std::vector<StorySample> train_, valid_, test_;
};

}  // namespace memgrad::babi
