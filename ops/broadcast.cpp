#include "ops/broadcast.hpp"

#include <algorithm>

namespace memgrad {
namespace {
// Pads a shape with leading 1s to rank 4 and returns row-major strides, 0 on stretched dims.
std::array<int64_t, 4> padded_strides(const Shape& s, const Shape& out) {
  std::array<int64_t, 4> dims{1, 1, 1, 1}, strides{0, 0, 0, 0};
  for (int i = 0; i < s.rank; ++i) dims[size_t(4 - s.rank + i)] = s.dims[size_t(i)];
  int64_t stride = 1;
  for (int i = 3; i >= 0; --i) {
    strides[size_t(i)] = (dims[size_t(i)] == 1 && out.dims[size_t(i)] != 1) ? 0 : stride;
    stride *= dims[size_t(i)];
  }
  return strides;
}
}  // namespace

BroadcastPlan plan_broadcast(const char* op, const Shape& a, const Shape& b) {
  BroadcastPlan p;
  const int rank = std::max(a.rank, b.rank);
  p.result.rank = rank;
  p.out.rank = 4;
  for (int i = 0; i < 4; ++i) p.out.dims[size_t(i)] = 1;
  for (int i = 0; i < rank; ++i) {
    const int ia = a.rank - rank + i, ib = b.rank - rank + i;
    const int64_t da = ia >= 0 ? a.dims[size_t(ia)] : 1;
    const int64_t db = ib >= 0 ? b.dims[size_t(ib)] : 1;
    MG_CHECK(da == db || da == 1 || db == 1, op, ": shapes ", a, " and ", b,
             " do not broadcast (dim ", i, ": ", da, " vs ", db, ")");
    const int64_t d = da == 1 ? db : da;
    p.result.dims[size_t(i)] = d;
    p.out.dims[size_t(4 - rank + i)] = d;
  }
  p.stride_a = padded_strides(a, p.out);
  p.stride_b = padded_strides(b, p.out);
  p.same = a == b;
  // Merge dims for the runs: skip dims of size 1; fold dim d into the previous merged dim when,
  // for both inputs, stepping the previous dim once equals stepping dim d across its whole extent
  // (both contiguous there, or both stretched).
  int r = 0;
  for (size_t d = 0; d < 4; ++d) {
    const int64_t n = p.out.dims[d], sa = p.stride_a[d], sb = p.stride_b[d];
    if (n == 1) continue;
    if (r > 0 && p.run_stride_a[size_t(r - 1)] == sa * n &&
        p.run_stride_b[size_t(r - 1)] == sb * n) {
      p.run_dims[size_t(r - 1)] *= n;
      p.run_stride_a[size_t(r - 1)] = sa;
      p.run_stride_b[size_t(r - 1)] = sb;
    } else {
      p.run_dims[size_t(r)] = n;
      p.run_stride_a[size_t(r)] = sa;
      p.run_stride_b[size_t(r)] = sb;
      ++r;
    }
  }
  p.runs_rank = r > 0 ? r : 1;  // a one-element output: one run of length 1
  return p;
}

}  // namespace memgrad
