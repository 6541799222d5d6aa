// OpDef names a primitive op. Defining one registers it, so the gradient-check registry can prove
// that every op that can appear on a tape has a check (see engine/gradcheck.hpp).
#pragma once
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace memgrad {

// What an op's backward reads of the forward pass's values: each input's (a bit per input; bit 31
// stands for the 32nd input and all after it) and its own output's. A value that no backward
// reads is dead once its consumers are recorded, and a tape may give its memory back during the
// forward pass (Tape::release_temporaries). An op that declares nothing reads everything; a
// declaration that claims too little is caught by tests/ops/test_backward_reads.cpp, which
// poisons the values declared unread in every gradient-check case and compares the gradients.
// A product's factors are read only for each other's gradients (d(ab)/da = b): with `pair` = k,
// inputs k and k + 1 are each read only when the other one needs a gradient (a mask or a
// constant factor needs none, so the other factor's value is dead after the forward pass).
struct BackwardReads {
  uint32_t inputs = ~0u;
  bool output = true;
  int8_t pair = -1;
  constexpr bool input(int k) const { return (inputs >> std::min(k, 31)) & 1u; }
};
inline constexpr BackwardReads kReadsEverything{};
inline constexpr BackwardReads kReadsNothing{0u, false};
inline constexpr BackwardReads kReadsInputs{~0u, false};
inline constexpr BackwardReads kReadsOutput{0u, true};
// Inputs `first` and first + 1, each only for the other's gradient (a product's factors).
constexpr BackwardReads reads_factors(int first = 0) {
  return BackwardReads{3u << first, false, int8_t(first)};
}
// The inputs listed (by position) and, when `output`, the op's own output.
constexpr BackwardReads reads_inputs(std::initializer_list<int> inputs, bool output = false) {
  uint32_t bits = 0;
  for (int k : inputs) bits |= 1u << k;
  return BackwardReads{bits, output};
}

struct OpDef {
  // Registers the op; define OpDefs only as namespace-scope statics (MG_OP below).
  // Leaves (inputs, parameters, detached values) have no backward and need no gradient check;
  // Tape refuses a leaf recorded with a backward, so no gradient escapes the check registry.
  // A name already registered is an Error: two ops of one name would share one check. (Thrown
  // during static initialisation, it stops the program before main, with the message.)
  explicit OpDef(const char* op_name, bool is_leaf = false, BackwardReads reads = {});
  const char* name;
  bool leaf;
  BackwardReads backward_reads;
};

// Every OpDef defined in the program, in registration order.
const std::vector<const OpDef*>& all_ops();

// MG_OP(add) defines `static const OpDef kOp_add{"add"}` in the current file.
#define MG_OP(ident) \
  static const ::memgrad::OpDef kOp_##ident { #ident }
// MG_OP_READS(add, kReadsNothing): the same, declaring what its backward reads (BackwardReads).
#define MG_OP_READS(ident, reads) \
  static const ::memgrad::OpDef kOp_##ident { #ident, false, reads }

}  // namespace memgrad
