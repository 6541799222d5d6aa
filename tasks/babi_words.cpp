// The words view of bAbI (tasks/babi_words.hpp).
#include "tasks/babi_words.hpp"

#include <algorithm>

#include "engine/error.hpp"

namespace memgrad::babi {

int64_t sequence_length(const Data& data, const Example& e) {
  int64_t n = int64_t(data.sentence(e.query).size());
  for (int64_t k = 0; k < e.count; ++k) n += int64_t(data.sentence(e.first + k).size());
  return n;
}

nlohmann::json WordsView::model_dims() const { return {{"vocab_size", data_.vocab.size()}}; }

// The view has no noise: a training batch is its drawn questions.
void WordsView::fill(Split split, std::span<const int64_t> indices, Rng* /*noise*/, DType dtype,
                     Batch& batch) const {
  const std::vector<Example>& set = examples(data_, split);
  const auto b = int64_t(indices.size());
  MG_CHECK(b >= 1, "babi: empty batch");
  int64_t t = 1;
  for (int64_t i : indices) {
    MG_CHECK(i >= 0 && i < int64_t(set.size()), "babi: example ", i, " out of range");
    t = std::max(t, sequence_length(data_, set[size_t(i)]));
  }
  Tensor& words = batch.field("words", Shape{b, t}, dtype);
  Tensor& mask = batch.field("words_mask", Shape{b, t}, dtype);
  Tensor& answer = batch.field("answer", Shape{b}, dtype);
  for (int64_t s = 0; s < b; ++s) {
    const Example& e = set[size_t(indices[size_t(s)])];
    int64_t at = s * t;
    auto put = [&](std::span<const int32_t> sentence) {
      for (int32_t id : sentence) {
        words.set(at, id);
        mask.set(at++, 1);
      }
    };
    for (int64_t k = 0; k < e.count; ++k) put(data_.sentence(e.first + k));
    put(data_.sentence(e.query));
    answer.set(s, e.answer);
  }
  batch.size = b;
}

int64_t WordsView::largest_train_sample() const {
  int64_t best = 0, longest = -1;
  for (size_t i = 0; i < data_.train.size(); ++i)
    if (const int64_t n = sequence_length(data_, data_.train[i]); n > longest) {
      longest = n;
      best = int64_t(i);
    }
  return best;
}

// The question's sequence (its statement words, then its question words), the answer and the
// model's answer, as words.
Lines WordsView::describe(const Batch& batch, const Tensor& predictions) const {
  MG_CHECK(batch.size == 1 && predictions.rank() == 2 && predictions.dim(0) == 1,
           "babi: predictions of shape ", predictions.shape(), " for a batch of ", batch.size);
  const Tensor& words = batch.get("words");
  Lines lines;
  lines.emplace_back("words", words_of(data_.vocab, words, 0, words.dim(1)));
  answer_lines(data_.vocab, int(batch.get("answer").at(0)), predictions.to_vector(), lines);
  return lines;
}

}  // namespace memgrad::babi
