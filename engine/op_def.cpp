#include "engine/op_def.hpp"

#include <cstring>

#include "engine/error.hpp"

namespace memgrad {
namespace {
std::vector<const OpDef*>& registry() {
  static std::vector<const OpDef*> ops;  // filled during static initialisation, read-only after
  return ops;
}
}  // namespace

OpDef::OpDef(const char* op_name, bool is_leaf, BackwardReads reads)
    : name(op_name), leaf(is_leaf), backward_reads(reads) {
  for (const OpDef* op : registry())
    MG_CHECK(std::strcmp(op->name, op_name) != 0, "op '", op_name,
             "' is defined twice: an op name must be registered once (its gradient-check cases "
             "are found by name)");
  registry().push_back(this);
}

const std::vector<const OpDef*>& all_ops() { return registry(); }

}  // namespace memgrad
