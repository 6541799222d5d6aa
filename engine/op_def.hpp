// OpDef names a primitive op. Defining one registers it, so the gradient-check registry can prove
// that every op that can appear on a tape has a check (see engine/gradcheck.hpp).
#pragma once
#include <string>
#include <vector>

namespace memgrad {

struct OpDef {
  // Registers the op; define OpDefs only as namespace-scope statics (MG_OP below).
  // Leaves (inputs, parameters, detached values) have no backward and need no gradient check;
  // Tape refuses a leaf recorded with a backward, so no gradient escapes the check registry.
  // A name already registered is an Error: two ops of one name would share one check. (Thrown
  // during static initialisation, it stops the program before main, with the message.)
  explicit OpDef(const char* op_name, bool is_leaf = false);
  const char* name;
  bool leaf;
};

// Every OpDef defined in the program, in registration order.
const std::vector<const OpDef*>& all_ops();

// MG_OP(add) defines `static const OpDef kOp_add{"add"}` in the current file.
#define MG_OP(ident) \
  static const ::memgrad::OpDef kOp_##ident { #ident }

}  // namespace memgrad
