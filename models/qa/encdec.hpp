// The LSTM encoder-decoder baseline of the AMN paper's Table 1 ("EncDec"; Li & Kadav, ICLR 2018
// submission, ../shared/papers/amn-adaptive-memory-networks.txt). The AMN paper names the
// baseline and gives its numbers but no architecture, size or recipe; ours follows the planning
// notes (P1 §3.5): the story and the question are read as one word sequence (the babi task's
// `words` view, tasks/babi_words.hpp) by one LSTM, and the answer is a softmax over the vocabulary
// of its last state. Registered as `encdec`.
//
//   h_t, c_t = LSTM(E[w_t], h_{t-1}, c_{t-1}),  h_0 = c_0 = 0, t = 1..T_b (T_b: sample b's tokens)
//   logits = W h_{T_b} + b   [B, V],   loss = mean_b cross-entropy(logits_b, answer_b)
// E [V, d] (d = 50, layers::Embedding: uniform(-1, 1)); LSTM of 100 units (rnn_cells.hpp: Glorot,
// forget bias 1); W Glorot, b = 0. A padded position (words_mask 0) never steps the LSTM, so each
// sample ends at its own last token (layers::run_lstm, with row packing: only the rows still
// reading are computed). Nothing but the final state reaches the answer: no attention.
//
// Batch fields: words [B, T], words_mask [B, T] (a prefix of ones per row), answer [B].
// Recipe (ours, P1 §3.5): Adam lr 1e-3, batch 32, 30 epochs, global-norm clip 5; the task keeps
// the epoch with the best validation accuracy (babi select_epoch auto).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/layers/linear.hpp"
#include "models/layers/rnn_cells.hpp"
#include "models/model.hpp"

namespace memgrad {

class EncDec : public Model {
 public:
  EncDec(const nlohmann::json& config, DType dtype, uint64_t seed);
  std::string name() const override { return "encdec"; }
  nlohmann::json config() const override { return config_; }
  ForwardResult forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) override;
  bool supports_shards() const override { return true; }

 private:
  nlohmann::json config_;
  bool pack_rows_ = true;
  layers::Embedding embed_;
  std::vector<LstmCell> cell_;  // one (LstmCell has no default constructor)
  layers::Linear out_;
};

}  // namespace memgrad
