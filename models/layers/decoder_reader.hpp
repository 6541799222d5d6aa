// The interface between the decoder (decoder.hpp) and what it reads at each step.
#pragma once
#include <cstdint>

#include "engine/tape.hpp"
#include "models/layers/rnn_cells.hpp"

namespace memgrad::layers {

// What a decoder reads at each step from its hidden state: memory reads (DMNC, DNC) or attention
// (WLAS). read() may advance the reader's own state (previous read weights).
class DecoderReader {
 public:
  virtual ~DecoderReader() = default;
  virtual int64_t width() const = 0;
  // The decoder's state (h, c [B, Hd]) -> context [B, width()].
  virtual Var read(Tape& tape, const LstmState& state) = 0;
  // Keeps only rows `rows` (data [n], indices into the current B rows) of whatever the reader
  // holds per sample, in that order: B becomes n (the decoder's packing orders its samples).
  virtual void take_rows(Tape& tape, Var rows) = 0;
  // Keeps the leading n rows (samples) of it, without copies (the decoder's packing drops samples
  // that have ended, which it keeps last).
  virtual void keep_leading(int64_t n) = 0;
};

}  // namespace memgrad::layers
