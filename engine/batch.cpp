#include "engine/batch.hpp"

namespace memgrad {

Tensor& Batch::field(const std::string& name, const Shape& shape, DType dtype) {
  for (auto& [n, t] : fields_)
    if (n == name) {
      t.reshape_reuse(shape, dtype);
      t.zero();
      return t;
    }
  fields_.emplace_back(name, Tensor::zeros(shape, dtype));
  return fields_.back().second;
}

const Tensor& Batch::get(const std::string& name) const {
  for (const auto& [n, t] : fields_)
    if (n == name) return t;
  std::string present;
  for (const auto& [n, t] : fields_) {
    if (!present.empty()) present += ", ";
    present += n;
  }
  fail("batch has no field '", name, "' (fields: ", present.empty() ? "none" : present, ")");
}

bool Batch::has(const std::string& name) const {
  for (const auto& [n, t] : fields_)
    if (n == name) return true;
  return false;
}

}  // namespace memgrad
