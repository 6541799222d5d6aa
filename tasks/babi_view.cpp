// The view dispatch, the shared per-question scoring, and the memory view (tasks/babi_view.hpp).
#include "tasks/babi_view.hpp"

#include <algorithm>

#include "engine/error.hpp"
#include "engine/quote.hpp"
#include "tasks/babi_memory_story.hpp"
#include "tasks/babi_words.hpp"

namespace memgrad::babi {

void count_answer(TaskCounts& counts, std::vector<Answered>* answered, int64_t example,
                  const Example& e, std::span<const double> scores) {
  metrics::TaskCount& c = counts[e.task];
  ++c.total;
  const int predicted = metrics::argmax(std::vector<double>(scores.begin(), scores.end()));
  if (predicted == e.answer) ++c.correct;
  if (answered) answered->push_back({example, predicted});
}

void answer_lines(const Vocabulary& vocab, int answer, std::span<const double> scores,
                  Lines& lines) {
  const int predicted = metrics::argmax(std::vector<double>(scores.begin(), scores.end()));
  lines.emplace_back("answer", vocab.word(answer));
  lines.emplace_back("predicted", vocab.answer(predicted));
  lines.emplace_back("correct", predicted == answer ? "yes" : "no");
}

std::string words_of(const Vocabulary& vocab, const Tensor& ids, int64_t begin, int64_t count) {
  std::string out;
  for (int64_t j = begin; j < begin + count; ++j) {
    const int id = int(ids.at(j));
    if (id <= 0) continue;
    if (!out.empty()) out += ' ';
    out += vocab.word(id);
  }
  return out;
}

const std::vector<Example>& examples(const Data& data, Split split) {
  switch (split) {
    case Split::train:
      return data.train;
    case Split::valid:
      return data.valid;
    case Split::test:
      break;
  }
  return data.test;
}

std::unique_ptr<View> make_view(const std::string& name, Data& data, double random_time) {
  if (name == "memory") return std::make_unique<MemoryView>(data, random_time);
  if (name == "words") return std::make_unique<WordsView>(data);
  if (name == "memory-story") return std::make_unique<MemoryStoryView>(data);
  fail(
      "babi: babi_view must be \"memory\" (MemN2N's memories), \"memory-story\" (the same "
      "sentences, one sample per story: EntNet's per-story mode), \"words\" (one word sequence "
      "per question) or \"story\" (whole stories, tasks/babi_story.hpp), got ",
      quote(name));
}

// ------------------------------------------------------------------------ one question a sample

int64_t QuestionView::samples(Split split) const { return int64_t(examples(data_, split).size()); }

void QuestionView::score(Split split, std::span<const int64_t> indices, const Tensor& predictions,
                         TaskCounts& counts, std::vector<Answered>* answered) const {
  MG_CHECK(predictions.rank() == 2 && predictions.dim(0) == int64_t(indices.size()),
           "babi: predictions must be [", indices.size(), ", classes], got ", predictions.shape());
  const std::vector<Example>& set = examples(data_, split);
  const int64_t classes = predictions.dim(1);
  const std::vector<double> s = predictions.to_vector();
  for (size_t i = 0; i < indices.size(); ++i) {
    const Example& e = set[size_t(indices[i])];
    count_answer(counts, answered, indices[i], e,
                 std::span<const double>(s).subspan(i * size_t(classes), classes));
  }
}

// ---------------------------------------------------------------------------------- memory view

MemoryView::MemoryView(const Data& data, double random_time)
    : QuestionView(data), random_time_(random_time) {}

nlohmann::json MemoryView::model_dims() const {
  return {{"vocab_size", data_.vocab.size()},
          {"sentence_len", data_.sentence_len},
          {"memory_size", data_.memory_size}};
}

void MemoryView::fill(Split split, std::span<const int64_t> indices, Rng* noise, DType dtype,
                      Batch& batch) const {
  // The training split's random_time also without noise (largest_train_sample's batch), so that
  // fill_batch's scratch is sized for the noisy batches that follow.
  fill_batch(data_, examples(data_, split), indices, noise,
             split == Split::train ? random_time_ : 0, dtype, batch);
}

// Sampling with replacement can draw the question with the most memories batch_size times, and a
// batch's shapes are set by its longest story.
int64_t MemoryView::largest_train_sample() const {
  const auto longest =
      std::max_element(data_.train.begin(), data_.train.end(),
                       [](const Example& a, const Example& b) { return a.count < b.count; });
  return int64_t(longest - data_.train.begin());
}

// The story's memories (oldest first, with their temporal index), the question, the answer and
// the model's answer, as words.
Lines MemoryView::describe(const Batch& batch, const Tensor& predictions) const {
  MG_CHECK(batch.size == 1 && predictions.rank() == 2 && predictions.dim(0) == 1,
           "babi: predictions of shape ", predictions.shape(), " for a batch of ", batch.size);
  const Tensor& story = batch.get("story");
  const Tensor& time = batch.get("time");
  const Tensor& mask = batch.get("memory_mask");
  const int64_t M = story.dim(1), J = story.dim(2);
  Lines lines;
  for (int64_t m = 0; m < M; ++m)
    if (mask.at(m) != 0)
      lines.emplace_back(
          "memory " + std::to_string(m) + " (time " + std::to_string(int(time.at(m))) + ")",
          words_of(data_.vocab, story, m * J, J));
  const Tensor& query = batch.get("query");
  lines.emplace_back("question", words_of(data_.vocab, query, 0, query.dim(1)));
  answer_lines(data_.vocab, int(batch.get("answer").at(0)), predictions.to_vector(), lines);
  return lines;
}

}  // namespace memgrad::babi
