#include "engine/op_def.hpp"

namespace memgrad {
namespace {
std::vector<const OpDef*>& registry() {
  static std::vector<const OpDef*> ops;  // filled during static initialisation, read-only after
  return ops;
}
}  // namespace

OpDef::OpDef(const char* op_name, bool is_leaf) : name(op_name), leaf(is_leaf) {
  registry().push_back(this);
}

const std::vector<const OpDef*>& all_ops() { return registry(); }

}  // namespace memgrad
