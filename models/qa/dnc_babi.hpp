// The DNC on bAbI (Graves et al., Nature 2016, Methods "bAbI"; ../shared/design/reference-notes.md
// section 1.2): one DNC reads a whole story as a word sequence (the babi task's story view,
// tasks/babi_story.hpp) and answers at every answer slot '-'. Registered as "dnc-babi".
//
// Why not the registered "dnc": that model (models/dnc/dmnc.hpp, ViewConcatDnc) reads two input
// views and then answers with a write-protected decoder after the whole input; here answers are due
// in the middle of the sequence, at every slot, from the same DNC that keeps writing, and the
// paper's bAbI recipe (sizes, RMSProp with momentum) differs from the DMNC recipe that "dnc" trains
// with. The memory is the same: dnc::step (models/dnc/dnc_memory.hpp) with one write head.
//
// Per position t of the story (all B stories step together; memory and controller start afresh for
// every story, dnc::initial_state and a zero LSTM state):
//   h_t, c_t = LSTM([x_t ; r_{t-1}])          x_t = embedding of word t (a table folded into the
//                                              LSTM's input projection, layers::TokenLstm)
//   c_t clamped to [-clip_controller, clip_controller] (DeepMind's controller clip; 0 = off)
//   interface_t = W_i h_t + b_i,  memory step (write, then read R heads on the new memory) -> r_t
//   y_t = W_y [h_t ; r_t] + b_y               scores over the vocabulary, at every position
// Loss: softmax cross-entropy of the answer at the answer slots only (answer_slots), the mean over
// the batch's slots. Padding after a story's end needs no mask: a position only feeds later ones,
// and no slot of that story comes later.
//
// Defaults (the paper's bAbI DNC as reproduced in reference-notes 1.2): LSTM 256, N = 256 slots,
// W = 64, R = 4 read heads, one write head. Deviations, each for a reason:
//   - embedding 64 instead of one-hot words: the folded table is [V, 4H] of rank 64 instead of
//     full rank, computed once per forward (a one-hot input would be a free [V, 4H] table);
//   - initialisation of the zoo (models/layers/linear.hpp, rnn_cells.hpp: Glorot, LSTM forget bias
//     1) instead of N(0, 0.1);
//   - the usage update passes gradient into the previous write weights (the paper's equation;
//     DeepMind's code stops it), as the zoo's other DNCs, so that the model's gradient can be
//     checked against finite differences (models/dnc/dmnc.hpp, "Usage gradient").
// Trace (memgrad inspect): per position "t<t>/" write_gate, alloc_gate, free_gates, usage,
// write_weights, read_weights, read_modes (dnc::step's entries).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/dnc/dnc_memory.hpp"
#include "models/layers/linear.hpp"
#include "models/layers/rnn_cells.hpp"
#include "models/model.hpp"

namespace memgrad {

class DncBabi : public Model {
 public:
  DncBabi(const nlohmann::json& config, DType dtype, uint64_t seed);
  std::string name() const override { return "dnc-babi"; }
  nlohmann::json config() const override { return config_; }
  bool supports_shards() const override { return true; }
  // Batch fields words, answer_slots, answers [B, T] (tasks/babi_story.hpp); predictions
  // [B, T, vocab_size].
  ForwardResult forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) override;

 private:
  nlohmann::json config_;
  dnc::MemoryConfig mem_;
  int64_t vocab_, embedding_, hidden_;
  double clip_;
  layers::Embedding embed_;
  std::vector<LstmCell> cell_;  // one; a vector because LstmCell has no empty state
  layers::Linear interface_, output_;
};

}  // namespace memgrad
