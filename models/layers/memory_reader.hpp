// Reading DNC memories from outside the controller that wrote them: the DNC read interface and
// MemoryReader, the write-protected reads of one or more frozen memories by a decoder (DMNC and the
// view-concatenated DNC).
#pragma once
#include <cstdint>
#include <span>
#include <string>

#include "engine/tape.hpp"
#include "models/dnc/dnc_memory.hpp"
#include "models/layers/decoder_reader.hpp"
#include "models/layers/linear.hpp"
#include "models/model.hpp"

namespace memgrad::layers {

// oneplus(x) = 1 + softplus(x), the DNC strength transform (>= 1).
Var oneplus(Var x);

// The DNC read function's interface, Eq. 5-8 / 12-13: R keys, R strengths (oneplus) and R read-mode
// distributions (softmax over (backward, content, forward), models/dnc/dnc_memory.hpp's order).
struct ReadInterface {
  Var keys;       // [M, R, W]
  Var strengths;  // [M, R]
  Var modes;      // [M, R, 3]
};
inline int64_t read_interface_size(const dnc::MemoryConfig& m) {
  return m.read_heads * m.word + 4 * m.read_heads;
}
// Splits raw [M, R*W + 4R] (keys | strengths | modes) and applies the transforms. raw is
// consumed, as by dnc::parse_interface.
ReadInterface parse_read_interface(Var raw, const dnc::MemoryConfig& m);

// Write-protected reads of K memories with ONE read function (Eq. 12-13: the same m_read^d reads
// M1 with o1 and M2 with o2). The decoder's hidden state h [B, K*Hk] is split into K outputs
// o_k [B, Hk]; o_k's read interface (one Linear Hk -> R*W + 4R shared by all k) addresses memory k
// with content and temporal-link modes, using memory k's frozen link matrix and the reader's own
// previous read weights on memory k. The K reads are one batched computation over K*B rows. The
// context is [r_1; ...; r_K], [B, K*R*W].
class MemoryReader : public DecoderReader {
 public:
  // `memories`: the K final memory states (memory, link used); `read_weights`: the initial
  // previous read weights [B, R, N] on each memory.
  MemoryReader(const Linear& head, const dnc::MemoryConfig& m, std::span<const dnc::State> memories,
               std::span<const Var> read_weights, Trace* trace, std::string prefix);
  int64_t width() const override { return k_ * m_.read_heads * m_.word; }
  Var read(Tape& tape, const LstmState& state) override;  // reads with state.h
  void take_rows(Tape& tape, Var rows) override;
  void keep_leading(int64_t n) override;

 private:
  const Linear& head_;
  dnc::MemoryConfig m_;
  int64_t k_, b_;
  Var memory_, link_, read_weights_;  // [K*B, N, W], [K*B, N, N], [K*B, R, N] (row b*K + k)
  Var memory_norms_;  // the frozen memory's slot norms, computed once for every read
  Trace* trace_;
  std::string prefix_;
  int64_t step_ = 0;
};

}  // namespace memgrad::layers
