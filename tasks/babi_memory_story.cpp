// The memory-story view of bAbI (tasks/babi_memory_story.hpp).
#include "tasks/babi_memory_story.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/error.hpp"

namespace memgrad::babi {

std::vector<StorySample> story_samples(const std::vector<Example>& examples) {
  std::vector<StorySample> out;
  const auto n = int64_t(examples.size());
  for (int64_t i = 0; i < n;) {
    const Example& e = examples[size_t(i)];
    if (e.before > e.count) {  // the window cuts the story: the memory view's sample
      out.push_back({e.first, e.count, i, 1});
      ++i;
      continue;
    }
    // The run of this story's questions whose whole prefix fits (before grows along a story, so
    // the ones that do not fit come after them).
    int64_t end = i + 1;
    while (end < n && examples[size_t(end)].story == e.story &&
           examples[size_t(end)].before == examples[size_t(end)].count)
      ++end;
    out.push_back({e.story_first, examples[size_t(end - 1)].before, i, int32_t(end - i)});
    i = end;
  }
  return out;
}

MemoryStoryView::MemoryStoryView(const Data& data)
    : data_(data),
      train_(story_samples(data.train)),
      valid_(story_samples(data.valid)),
      test_(story_samples(data.test)) {}

const std::vector<StorySample>& MemoryStoryView::of(Split split) const {
  switch (split) {
    case Split::train:
      return train_;
    case Split::valid:
      return valid_;
    case Split::test:
      break;
  }
  return test_;
}

nlohmann::json MemoryStoryView::model_dims() const {
  return {{"vocab_size", data_.vocab.size()},
          {"sentence_len", data_.sentence_len},
          {"memory_size", data_.memory_size},
          {"per_story", true}};
}

int64_t MemoryStoryView::samples(Split split) const { return int64_t(of(split).size()); }

int64_t MemoryStoryView::questions(Split split) const {
  return int64_t(examples(data_, split).size());
}

int64_t MemoryStoryView::samples_per_batch(int64_t batch_size) const {
  const double per_question = double(samples(Split::train)) / double(questions(Split::train));
  return std::max<int64_t>(1, std::llround(double(batch_size) * per_question));
}

void MemoryStoryView::fill(Split split, std::span<const int64_t> indices, Rng* /*noise*/,
                           DType dtype, Batch& batch) const {
  const std::vector<StorySample>& set = of(split);
  const std::vector<Example>& ex = examples(data_, split);
  const auto b = int64_t(indices.size());
  MG_CHECK(b >= 1, "babi: empty batch");
  int64_t m = 1, q = 1;
  for (int64_t i : indices) {
    MG_CHECK(i >= 0 && i < int64_t(set.size()), "babi: story sample ", i, " out of range");
    m = std::max<int64_t>(m, set[size_t(i)].length);
    q = std::max<int64_t>(q, set[size_t(i)].questions);
  }
  const int64_t j = data_.sentence_len;
  Tensor& story = batch.field("story", Shape{b, m, j}, dtype);
  Tensor& mask = batch.field("memory_mask", Shape{b, m}, dtype);
  Tensor& query = batch.field("questions", Shape{b, q, j}, dtype);
  Tensor& at = batch.field("question_at", Shape{b, q}, dtype);
  Tensor& answer = batch.field("answers", Shape{b, q}, dtype);
  Tensor& live = batch.field("question_mask", Shape{b, q}, dtype);
  for (int64_t s = 0; s < b; ++s) {
    const StorySample& sample = set[size_t(indices[size_t(s)])];
    for (int64_t k = 0; k < sample.length; ++k) {
      const auto words = data_.sentence(sample.first + k);
      for (size_t w = 0; w < words.size(); ++w) story.set((s * m + k) * j + int64_t(w), words[w]);
      mask.set(s * m + k, 1);
    }
    for (int64_t k = 0; k < sample.questions; ++k) {
      const Example& e = ex[size_t(sample.question + k)];
      const auto words = data_.sentence(e.query);
      for (size_t w = 0; w < words.size(); ++w) query.set((s * q + k) * j + int64_t(w), words[w]);
      at.set(s * q + k, double(e.first + e.count - sample.first));
      answer.set(s * q + k, e.answer);
      live.set(s * q + k, 1);
    }
  }
  batch.size = b;
}

int64_t MemoryStoryView::largest_train_sample() const {
  const auto longest = std::max_element(
      train_.begin(), train_.end(),
      [](const StorySample& a, const StorySample& b) { return a.length < b.length; });
  return int64_t(longest - train_.begin());
}

void MemoryStoryView::largest_train_indices(int64_t count, std::vector<int64_t>& indices) const {
  indices.assign(size_t(count), largest_train_sample());
  const auto most = std::max_element(
      train_.begin(), train_.end(),
      [](const StorySample& a, const StorySample& b) { return a.questions < b.questions; });
  if (count > 1)
    indices[1] = int64_t(most - train_.begin());
  else if (most->questions > train_[size_t(indices[0])].questions)
    indices[0] = int64_t(most - train_.begin());  // (one row: Q matters more than M for shapes)
}

void MemoryStoryView::score(Split split, std::span<const int64_t> indices,
                            const Tensor& predictions, TaskCounts& counts,
                            std::vector<Answered>* answered) const {
  const std::vector<StorySample>& set = of(split);
  const std::vector<Example>& ex = examples(data_, split);
  MG_CHECK(predictions.rank() == 3 && predictions.dim(0) == int64_t(indices.size()),
           "babi: predictions must be [", indices.size(), ", questions, classes], got ",
           predictions.shape());
  const int64_t q = predictions.dim(1), classes = predictions.dim(2);
  const std::vector<double> s = predictions.to_vector();
  for (size_t i = 0; i < indices.size(); ++i) {
    const StorySample& sample = set[size_t(indices[i])];
    MG_CHECK(sample.questions <= q, "babi: predictions hold ", q, " questions a sample, sample ",
             indices[i], " has ", sample.questions);
    for (int64_t k = 0; k < sample.questions; ++k) {
      const int64_t example = sample.question + k;
      count_answer(counts, answered, example, ex[size_t(example)],
                   std::span<const double>(s).subspan(size_t((int64_t(i) * q + k) * classes),
                                                      size_t(classes)));
    }
  }
}

// The sentences as the memory view names them ("memory m (time t)", t = 1 the latest), then each
// question with its position and the model's answer ("question k (after sentence n)", "answer k",
// "predicted k", "correct k").
Lines MemoryStoryView::describe(const Batch& batch, const Tensor& predictions) const {
  MG_CHECK(batch.size == 1 && predictions.rank() == 3 && predictions.dim(0) == 1,
           "babi: predictions of shape ", predictions.shape(), " for a batch of ", batch.size);
  const Tensor& story = batch.get("story");
  const Tensor& mask = batch.get("memory_mask");
  const Tensor& query = batch.get("questions");
  const Tensor& at = batch.get("question_at");
  const Tensor& answers = batch.get("answers");
  const Tensor& live = batch.get("question_mask");
  const int64_t M = story.dim(1), J = story.dim(2), Q = query.dim(1), C = predictions.dim(2);
  int64_t real = 0;
  for (int64_t m = 0; m < M; ++m) real += mask.at(m) != 0 ? 1 : 0;
  const std::vector<double> scores = predictions.to_vector();
  Lines lines;
  for (int64_t m = 0; m < M; ++m)
    if (mask.at(m) != 0)
      lines.emplace_back("memory " + std::to_string(m) + " (time " + std::to_string(real - m) + ")",
                         words_of(data_.vocab, story, m * J, J));
  for (int64_t k = 0; k < Q; ++k) {
    if (live.at(k) == 0) continue;
    const std::string n = std::to_string(k + 1);
    lines.emplace_back(
        "question " + n + " (after sentence " + std::to_string(int64_t(at.at(k))) + ")",
        words_of(data_.vocab, query, k * J, J));
    Lines outcome;
    answer_lines(data_.vocab, int(answers.at(k)),
                 std::span<const double>(scores).subspan(size_t(k * C), size_t(C)), outcome);
    for (auto& [key, value] : outcome) lines.emplace_back(key + " " + n, value);
  }
  return lines;
}

}  // namespace memgrad::babi
