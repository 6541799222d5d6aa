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
  return p;
}

}  // namespace memgrad
