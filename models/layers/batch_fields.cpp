#include "models/layers/batch_fields.hpp"

#include "engine/error.hpp"

namespace memgrad::layers {

const Tensor& field(const Batch& batch, const std::string& model, const std::string& name,
                    int rank) {
  MG_CHECK(batch.has(name), model, ": the batch has no field '", name, "'");
  const Tensor& t = batch.get(name);
  MG_CHECK(t.rank() == rank, model, ": batch field '", name, "' must have rank ", rank, ", got ",
           t.shape());
  return t;
}

void expect_shape(const std::string& model, const std::string& name, const Tensor& t,
                  const Shape& want) {
  MG_CHECK(t.shape() == want, model, ": batch field '", name, "' must be ", want, ", got ",
           t.shape());
}

}  // namespace memgrad::layers
