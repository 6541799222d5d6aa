// A batch: named tensors (token ids, masks, targets) that a task fills and a model reads. It lives
// in the engine so that tasks and models share it without knowing each other. Ids and masks are
// stored in the model's float dtype as whole numbers / 0-1 values, the convention every op that
// takes indices follows. Filling a batch of the same shapes again reuses its memory.
#pragma once
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "engine/tensor.hpp"

namespace memgrad {

class Batch {
 public:
  // The field `name`, created or reshaped (reusing its memory) to shape and dtype; zero-filled.
  Tensor& field(const std::string& name, const Shape& shape, DType dtype);
  // The field `name`; an Error names the missing field and the fields present.
  const Tensor& get(const std::string& name) const;
  bool has(const std::string& name) const;
  const std::deque<std::pair<std::string, Tensor>>& fields() const { return fields_; }

  int64_t size = 0;  // number of samples

 private:
  // A deque: a reference returned by field() stays valid while more fields are added.
  std::deque<std::pair<std::string, Tensor>> fields_;
};

}  // namespace memgrad
