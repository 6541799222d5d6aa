// The `words` view of bAbI (task setting babi_view = "words"; tasks/babi_view.hpp): one sample per
// question, its story read as one word sequence for sequence models (the LSTM encoder-decoder
// baseline `encdec`): the words of the statements in the question's window (the same window the
// memory view gives: the last Data::memory_size statements of the story before the question, all
// of them unless the story is longer, as in qa3), in story order, then the question's words.
// Punctuation is dropped by the tokenizer, so sentences are not delimited.
//
// Batch fields (float dtype of the model, whole numbers; T = the longest sequence of the batch):
//   words       [B, T]  word ids, left-aligned, 0 = padding after the sequence's end
//   words_mask  [B, T]  1 on real tokens, 0 on padding (a prefix of each row)
//   answer      [B]     word id of the answer
// model_dims: vocab_size (nil at id 0). Scores are [B, C] over the vocabulary, as the memory
// view's.
#pragma once
#include "tasks/babi_view.hpp"

namespace memgrad::babi {

// Tokens of example e's sequence: its window's statements, then its question.
int64_t sequence_length(const Data& data, const Example& e);

class WordsView : public QuestionView {
 public:
  explicit WordsView(const Data& data) : QuestionView(data) {}
  nlohmann::json model_dims() const override;
  void fill(Split split, std::span<const int64_t> indices, Rng* noise, DType dtype,
            Batch& batch) const override;
  int64_t largest_train_sample() const override;
  Lines describe(const Batch& batch, const Tensor& predictions) const override;
};

}  // namespace memgrad::babi
