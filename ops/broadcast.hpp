// Broadcasting for binary elementwise ops, numpy style: shapes are aligned on the right and a dim
// of size 1 (or a missing leading dim) stretches to match. This is the one place where gradients of
// broadcast inputs are reduced back to the input's shape: the backward loop visits every output
// element and adds into the input element it came from, so a stretched dim is summed.
#pragma once
#include "engine/tensor.hpp"

namespace memgrad {

struct BroadcastPlan {
  Shape out;                        // rank 4, padded on the left with 1s
  std::array<int64_t, 4> stride_a;  // element strides of a and b in the padded out-index space
  std::array<int64_t, 4> stride_b;  // (0 where the input is stretched)
  Shape result;                     // the output shape with its natural rank
  bool same = false;                // a, b and out all have the same shape: flat loops
};

BroadcastPlan plan_broadcast(const char* op, const Shape& a, const Shape& b);

// Calls f(out_index, a_index, b_index) for every output element, in row-major order.
template <class F>
void for_each_broadcast(const BroadcastPlan& p, F&& f) {
  if (p.same) {
    const int64_t n = p.result.numel();
    for (int64_t i = 0; i < n; ++i) f(i, i, i);
    return;
  }
  int64_t o = 0;
  for (int64_t i0 = 0; i0 < p.out.dims[0]; ++i0)
    for (int64_t i1 = 0; i1 < p.out.dims[1]; ++i1)
      for (int64_t i2 = 0; i2 < p.out.dims[2]; ++i2) {
        int64_t ia = i0 * p.stride_a[0] + i1 * p.stride_a[1] + i2 * p.stride_a[2];
        int64_t ib = i0 * p.stride_b[0] + i1 * p.stride_b[1] + i2 * p.stride_b[2];
        for (int64_t i3 = 0; i3 < p.out.dims[3]; ++i3, ++o)
          f(o, ia + i3 * p.stride_a[3], ib + i3 * p.stride_b[3]);
      }
}

// The index into b of output element o (for ops that walk two plans over one output).
inline int64_t b_index(const BroadcastPlan& p, int64_t o) {
  if (p.same) return o;
  int64_t idx = 0;
  for (int d = 3; d >= 0; --d) {
    const int64_t n = p.out.dims[size_t(d)];
    idx += (o % n) * p.stride_b[size_t(d)];
    o /= n;
  }
  return idx;
}

}  // namespace memgrad
