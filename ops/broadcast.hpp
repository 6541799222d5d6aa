// Broadcasting for binary elementwise ops, numpy style: shapes are aligned on the right and a dim
// of size 1 (or a missing leading dim) stretches to match. This is the one place where gradients of
// broadcast inputs are reduced back to the input's shape: the backward loop visits every output
// element and adds into the input element it came from, so a stretched dim is summed.
//
// Kernels walk the output in runs (for_each_run): the longest stretches of consecutive output
// elements along which each input either advances by one element or stays put. Inside a run the
// loop is a plain contiguous loop the compiler vectorizes; for_each_broadcast (one call per
// element) remains for the rare op that needs arbitrary index pairs.
#pragma once
#include <type_traits>

#include "engine/tensor.hpp"

namespace memgrad {

struct BroadcastPlan {
  Shape out;                        // rank 4, padded on the left with 1s
  std::array<int64_t, 4> stride_a;  // element strides of a and b in the padded out-index space
  std::array<int64_t, 4> stride_b;  // (0 where the input is stretched)
  Shape result;                     // the output shape with its natural rank
  bool same = false;                // a, b and out all have the same shape: flat loops
  // The same index space with dims of size 1 dropped and neighbouring dims merged wherever both
  // inputs allow it ([B,T,D] + [D] becomes [B*T, D]; [B,N,W] * [B,N,W] becomes [B*N*W]).
  // Kernels walk it as runs along the last merged dim, where each input's stride is 0 or 1.
  int runs_rank = 1;
  std::array<int64_t, 4> run_dims{1, 1, 1, 1};
  std::array<int64_t, 4> run_stride_a{1, 1, 1, 1};
  std::array<int64_t, 4> run_stride_b{1, 1, 1, 1};
};

BroadcastPlan plan_broadcast(const char* op, const Shape& a, const Shape& b);

// A stride known at compile time (0: the input is stretched along the run, 1: contiguous), so
// that a kernel's inner loop `p[i + k * s]` is a plain contiguous or constant access that the
// compiler vectorizes.
template <int64_t S>
using RunStride = std::integral_constant<int64_t, S>;

// Calls f(o, i, j, n, sa, sb) for each run of n consecutive output elements o.. o+n-1, whose
// inputs are a[i + k*sa] and b[j + k*sb] for k in [0, n); sa and sb are RunStride<0 or 1>.
// Runs come in row-major output order.
template <class F>
void for_each_run(const BroadcastPlan& p, F&& f) {
  const int last = p.runs_rank - 1;
  const int64_t n = p.run_dims[size_t(last)];
  int64_t total = 1;
  for (int d = 0; d <= last; ++d) total *= p.run_dims[size_t(d)];
  auto walk = [&](auto sa, auto sb) {
    std::array<int64_t, 4> idx{};  // position in the outer (merged) dims
    int64_t i = 0, j = 0;
    for (int64_t o = 0; o < total; o += n) {
      f(o, i, j, n, sa, sb);
      for (int d = last - 1; d >= 0; --d) {  // odometer step over the outer dims
        i += p.run_stride_a[size_t(d)];
        j += p.run_stride_b[size_t(d)];
        if (++idx[size_t(d)] < p.run_dims[size_t(d)]) break;
        i -= p.run_stride_a[size_t(d)] * p.run_dims[size_t(d)];
        j -= p.run_stride_b[size_t(d)] * p.run_dims[size_t(d)];
        idx[size_t(d)] = 0;
      }
    }
  };
  // The output's last merged dim has size > 1 unless the output has one element, so at most one
  // input is stretched along a run.
  const bool a1 = p.run_stride_a[size_t(last)] != 0, b1 = p.run_stride_b[size_t(last)] != 0;
  if (a1 && b1)
    walk(RunStride<1>{}, RunStride<1>{});
  else if (a1)
    walk(RunStride<1>{}, RunStride<0>{});
  else
    walk(RunStride<0>{}, RunStride<1>{});
}

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
