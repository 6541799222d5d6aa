// Running LSTMs over token sequences: a cell fed by an embedding with the table projected once
// (TokenLstm), a masked encoder over one view of tokens (run_lstm), and the state helpers they use.
#pragma once
#include <vector>

#include "engine/tape.hpp"
#include "models/layers/linear.hpp"
#include "models/layers/rnn_cells.hpp"

namespace memgrad::layers {

// c clamped to [-clip, clip] when clip > 0 (h = o * tanh(c) is already in (-1, 1)).
LstmState clip_state(const LstmState& s, double clip);
// [h_a; h_b], [c_a; c_b] along the feature axis.
LstmState concat_states(const LstmState& a, const LstmState& b);

// The steps of an LSTM whose input is [e(id_t) ; r_t]: e an Embedding, id_t a token, r_t what only
// the steps produce (memory reads, an attention context; nothing when the cell's input is E wide).
// The embedding and its share of the input projection fold into one table, e W_x[:E] + b [V, 4H],
// made once per forward pass; a step looks up its ids' rows and adds r_t W_x[E:] + h W_h. The same
// function as embed, concat and LstmCell::step, but the GEMM covers V rows instead of one per
// token. That pays while the vocabulary is smaller than the pass's tokens (sum2seq: about 100 words
// against 50 x 20 tokens); a clinical vocabulary of thousands of codes would project thousands of
// rows for a few hundred tokens (and back-propagate them), so with `tokens` (the most ids the
// pass will look up, e.g. B x T) below V the steps embed their ids and project just those rows.
class TokenLstm {
 public:
  TokenLstm(Tape& tape, const Embedding& embed, const LstmCell& cell, int64_t tokens = -1);
  // The projected table is dead once the steps that look it up are recorded: given back (on a
  // tape that releases temporaries) when this object ends, so it is neither copied nor moved.
  ~TokenLstm();
  TokenLstm(const TokenLstm&) = delete;
  TokenLstm& operator=(const TokenLstm&) = delete;
  const LstmCell& cell() const { return cell_; }
  // ids [n] or [n, 1] (whole numbers in [0, V)), rest [n, in - E] (undefined when in = E) -> the
  // new state of those n rows.
  LstmState step(Tape& tape, Var ids, Var rest, const LstmState& prev) const;

 private:
  const Embedding& embed_;
  const LstmCell& cell_;
  LstmCell::SplitInput split_;
  Var table_;  // [V, 4H], projected; or the embedding table [V, E] when !projected_
  bool projected_;
};

// Runs an LSTM over one view of tokens: lstm's embedding and cell, ids [B, T], mask [B, T]. A
// sample without an event at step t keeps its state; a step no sample has is skipped. With `pack`
// a step computes the rows of the samples with an event only (RetiringRows when the mask is a
// padded batch's and no `outputs` are wanted, else StepMask's packing), else every row, blended.
// The input projection of every token is a lookup in lstm's projected table. With `outputs`,
// appends the state's h (its cell state c with `output_cells`) after every step (all B rows), T
// entries.
LstmState run_lstm(Tape& tape, const TokenLstm& lstm, Var ids, Var mask, LstmState state,
                   double clip, bool pack, std::vector<Var>* outputs = nullptr,
                   bool output_cells = false);

}  // namespace memgrad::layers
