// Reading a model's batch fields: each one checked for presence, rank and shape, with an Error
// that names the model and the field.
#pragma once
#include <string>

#include "engine/batch.hpp"

namespace memgrad::layers {

// The batch field `name`, checked to have rank `rank`; an Error names the model and the field.
const Tensor& field(const Batch& batch, const std::string& model, const std::string& name,
                    int rank);
// Throws an Error naming the model, the field and both shapes unless t has shape `want`.
void expect_shape(const std::string& model, const std::string& name, const Tensor& t,
                  const Shape& want);

}  // namespace memgrad::layers
