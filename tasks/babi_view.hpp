// Views of a bAbI story: how the `babi` task (tasks/babi.cpp) turns the loaded questions into
// batches, chosen by the task setting `babi_view`. The task owns sampling (with replacement, a
// pure function of seed and step), validation and test passes, and the metrics; a view owns what
// a sample is, the batch fields, and which prediction answers which question.
//   memory  one sample per question: the memory fields of tasks/babi.hpp (MemN2N); the default
//   words   one sample per question: story prefix words, then question words (tasks/babi_words.hpp)
//   memory-story  one sample per story, its questions at their positions (babi_memory_story.hpp)
// Adding a view: a class implementing View in a file of its own, and one branch in make_view().
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/batch.hpp"
#include "engine/rng.hpp"
#include "tasks/babi.hpp"
#include "tasks/metrics.hpp"

namespace memgrad::babi {

enum class Split { train, valid, test };

// Answer counts per task number.
using TaskCounts = std::map<int, metrics::TaskCount>;

// One scored question: its index in its split's examples and the model's answer (a word id).
struct Answered {
  int64_t example = 0;
  int predicted = 0;
};

// Adds the outcome of question `example` (e) of a split to counts[e.task]: right when the argmax
// of `scores` (the first on ties) is e.answer; with `answered`, also appends what was answered.
// Every view scores its questions with this.
void count_answer(TaskCounts& counts, std::vector<Answered>* answered, int64_t example,
                  const Example& e, std::span<const double> scores);

// Named lines for `memgrad inspect`, "question"/"answer"/... as Task::Lines.
using Lines = std::vector<std::pair<std::string, std::string>>;
// The answer, the predicted word (argmax of scores) and whether they agree.
void answer_lines(const Vocabulary& vocab, int answer, std::span<const double> scores,
                  Lines& lines);

// Space-separated words of ids[begin, begin + count), nil (0) skipped.
std::string words_of(const Vocabulary& vocab, const Tensor& ids, int64_t begin, int64_t count);

// The questions of one split of the loaded data.
const std::vector<Example>& examples(const Data& data, Split split);

class View {
 public:
  virtual ~View() = default;
  // Sizes merged into the model's config (vocab_size, ...).
  virtual nlohmann::json model_dims() const = 0;
  // Samples of a split (questions; a view may make one sample of several questions).
  virtual int64_t samples(Split split) const = 0;
  // Questions of a split: an epoch is questions(train) / batch updates for every view.
  virtual int64_t questions(Split split) const { return samples(split); }
  // Samples of a training batch of about `batch_size` questions.
  virtual int64_t samples_per_batch(int64_t batch_size) const { return batch_size; }
  // Fills `batch` with samples `indices` of `split`. `noise` is the training batch's random stream
  // (after the indices were drawn from it), null for validation and test.
  virtual void fill(Split split, std::span<const int64_t> indices, Rng* noise, DType dtype,
                    Batch& batch) const = 0;
  // The training sample whose batch is the largest (shapes and work) when repeated.
  virtual int64_t largest_train_sample() const = 0;
  // The `count` training samples of the largest batch (shapes and work) a draw can make: by
  // default largest_train_sample() `count` times (sampling with replacement can draw it so).
  virtual void largest_train_indices(int64_t count, std::vector<int64_t>& indices) const {
    indices.assign(size_t(count), largest_train_sample());
  }
  // Adds the outcome of every question in a batch fill() made (samples `indices` of `split`) to
  // counts, and (when not null) each question's answer to `answered`; predictions are the model's
  // scores for the batch.
  virtual void score(Split split, std::span<const int64_t> indices, const Tensor& predictions,
                     TaskCounts& counts, std::vector<Answered>* answered) const = 0;
  // A batch of one in words, with the model's answer (memgrad inspect).
  virtual Lines describe(const Batch& batch, const Tensor& predictions) const = 0;
};

// The view named `name` of `data` (which a view may extend, e.g. with a token of its own, before
// the task reports model_dims). random_time: the memory view's random noise. An Error names the
// setting and lists the views for any other name.
std::unique_ptr<View> make_view(const std::string& name, Data& data, double random_time);

// Views that answer one question per sample with scores [B, C] (memory, words) share this.
class QuestionView : public View {
 public:
  explicit QuestionView(const Data& data) : data_(data) {}
  int64_t samples(Split split) const override;
  void score(Split split, std::span<const int64_t> indices, const Tensor& predictions,
             TaskCounts& counts, std::vector<Answered>* answered) const override;

 protected:
  const Data& data_;
};

// The memory view (tasks/babi.hpp's fields, fill_batch).
class MemoryView : public QuestionView {
 public:
  MemoryView(const Data& data, double random_time);
  nlohmann::json model_dims() const override;
  void fill(Split split, std::span<const int64_t> indices, Rng* noise, DType dtype,
            Batch& batch) const override;
  int64_t largest_train_sample() const override;
  Lines describe(const Batch& batch, const Tensor& predictions) const override;

 private:
  double random_time_;
};

}  // namespace memgrad::babi
