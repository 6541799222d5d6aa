#include "models/qa/position_encoding.hpp"

#include "engine/error.hpp"

namespace memgrad::qa {

Tensor position_encoding(int64_t positions, int64_t total, int64_t dim, DType dtype) {
  MG_CHECK(positions >= 1 && positions <= total && dim >= 1, "position encoding of ", positions,
           " of ", total, " positions, dim ", dim, ": need 1 <= positions <= total and dim >= 1");
  Tensor l = Tensor::empty(Shape{positions, dim}, dtype);
  const double d = double(dim), jj = double(total);
  for (int64_t j = 1; j <= positions; ++j)
    for (int64_t k = 1; k <= dim; ++k)
      l.set((j - 1) * dim + (k - 1),
            1.0 + 4.0 * (double(k) - (d + 1) / 2) * (double(j) - (jj + 1) / 2) / (d * jj));
  return l;
}

}  // namespace memgrad::qa
