// Row packing: stepping only the samples of a batch whose view has an event at a step. StepMask
// blends or packs one step of a masked batch; RetiringRows keeps a padded batch's state compact,
// dropping each sample's rows once its view has ended. Both work on an LSTM's state and on a DNC
// memory's.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/tape.hpp"
#include "models/dnc/dnc_memory.hpp"
#include "models/layers/rnn_cells.hpp"

namespace memgrad::layers {

// Column t of a view mask [B, T] (a tape Var holding 0/1): which samples have an event at step t.
// blend(fresh, old) is the state update of Algorithm 1 for a batch: fresh where the sample's view
// has an event, old where it has ended (state = mask * new + (1 - mask) * old, realised with the
// `where` op so that the unused branch gets an exactly-zero gradient). When every sample has an
// event it returns fresh itself, and callers skip a step no sample has (any() false).
//
// Packing, the cheaper way to the same result: take() the rows of the samples with an event (n of
// the B), compute the step on those n rows only, and put() them back over the old state. Rows are
// independent in every step, so put(old, step(take(old))) equals blend(step(old), old) in every
// row, at n/B of the step's cost. take and put are identities when all() holds.
class StepMask {
 public:
  StepMask(Var mask, int64_t t);
  bool any() const { return any_; }
  bool all() const { return all_; }
  Var blend(Var fresh, Var old) const;
  LstmState blend(const LstmState& fresh, const LstmState& old) const;
  dnc::State blend(const dnc::State& fresh, const dnc::State& old) const;

  Var take(Var full) const;            // [B, ...] -> [n, ...]
  Var put(Var old, Var packed) const;  // old [B, ...] with the n rows replaced
  LstmState take(const LstmState& full) const;
  LstmState put(const LstmState& old, const LstmState& packed) const;
  dnc::State take(const dnc::State& full) const;
  dnc::State put(const dnc::State& old, const dnc::State& packed) const;

 private:
  Var column(int rank) const;  // [B, 1, ..., 1] of the given rank
  Var rows() const;            // the n sample indices with an event, increasing, as data [n]
  Var mask_;
  int64_t t_;
  int64_t on_ = 0;
  bool any_ = false, all_ = false;
  mutable Var cols_[5];
  mutable Var rows_;
};

// order = the rows 0..n-1 of `lengths` longest first, ties in row order; returns whether that
// differs from 0..n-1. Packing keeps its rows in this order, so that the rows still stepping are
// always the leading ones.
bool longest_first(std::span<const int64_t> lengths, std::vector<int64_t>& order);

// Packing for views whose events are a prefix of each sample's steps (a padded batch: a sample
// whose view has ended never steps again). StepMask::put writes the n stepped rows back into the
// whole [B, ...] state at every step; here the state stays compact instead: it holds only the rows
// that still step. The rows are kept sorted by view length, longest first (one gather before the
// first step, skipped when the batch is in that order already), so the rows that step on are
// always the leading ones: a step narrows each field to them without a copy (a slice of leading
// rows is a view) and copies out only the rows that end, once. finish() joins the pieces and puts
// them back in the batch's order. Same values as StepMask's packing in every row (a test compares
// them), a fraction of the copying.
class RetiringRows {
 public:
  // True when every row of mask [B, T] is 1 up to some step and 0 after it.
  static bool prefix_events(const Tensor& mask);
  // mask [B, T] with prefix_events. Helpers alive at the same time need different `slot`s (0-3):
  // each keeps its row lists in the tape's scratch under its slot.
  RetiringRows(Var mask, int slot);
  // Step t: sets aside the rows of `fields` (the state's tensors, [n, ...] in the order take()
  // gives) whose view has no event at t; returns how many rows step (0: none).
  int64_t begin_step(int64_t t, std::span<Var* const> fields);
  Var take(Var full) const;  // [B, ...] in the batch's order -> the rows that step
  // After the last step: every field back at [B, ...], in the batch's order.
  void finish(std::span<Var* const> fields);

 private:
  Var index(std::span<const int64_t> rows) const;
  Var mask_;
  int64_t batch_ = 0;
  size_t fields_ = 0;              // fields per piece, fixed by the first begin_step
  std::vector<int64_t>* order_;    // position p of the fields holds batch row order[p]
  std::vector<int64_t>* lengths_;  // view length of position p (non-increasing)
  std::vector<int64_t>* scratch_;  // finish(): each batch row's position
  std::vector<Var>* pieces_;       // per retirement, one piece per field
  std::vector<Var>* joined_;       // scratch: one field's pieces, for concat
  int64_t rows_ = 0;               // rows the fields hold now (the leading positions)
  bool sorted_ = false;            // whether order_ differs from the batch's order
  bool started_ = false;           // whether begin_step has put the fields in order_
  mutable Var stepping_rows_;      // order_[0, rows_) as data, made when take() needs it
};
// The state tensors of an LSTM and of a DNC memory, for RetiringRows.
std::array<Var*, 2> state_fields(LstmState& s);
std::array<Var*, 8> state_fields(dnc::State& s);

// The whole numbers `rows` (row indices, token ids) as a data leaf [n] on the tape, in `dtype`,
// in the tape's reused slot (no allocation in steady state).
Var index_leaf(Tape& tape, std::span<const int64_t> rows, DType dtype);

}  // namespace memgrad::layers
