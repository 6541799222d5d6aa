#include "engine/op_profile.hpp"

#include <algorithm>

namespace memgrad {

void OpProfile::add_forward(const OpDef* op, double ms) {
  Entry& e = by_op_[op];
  e.op = op;
  ++e.forward_count;
  e.forward_ms += ms;
}

void OpProfile::add_value_bytes(const OpDef* op, double bytes) {
  Entry& e = by_op_[op];
  e.op = op;
  e.value_bytes += bytes;
}

void OpProfile::add_backward(const OpDef* op, double ms) {
  Entry& e = by_op_[op];
  e.op = op;
  ++e.backward_count;
  e.backward_ms += ms;
}

std::vector<OpProfile::Entry> OpProfile::sorted() const {
  std::vector<Entry> out;
  out.reserve(by_op_.size());
  for (const auto& [op, e] : by_op_) out.push_back(e);
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) {
    return a.forward_ms + a.backward_ms > b.forward_ms + b.backward_ms;
  });
  return out;
}

}  // namespace memgrad
