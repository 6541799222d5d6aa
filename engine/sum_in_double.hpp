// The sum of f(x[i]) over i in [0, n), accumulated in double with four interleaved partial sums:
// independent additions overlap instead of each waiting on the one before. The partial sums are
// combined in a fixed order, so the result is the same on every run. Used by sum_axis, l2_norm and
// the optimizer's gradient norm.
#pragma once
#include <cstdint>

namespace memgrad {

template <class T, class F>
double sum_in_double(const T* x, int64_t n, F f) {
  double s[4] = {0, 0, 0, 0};
  int64_t j = 0;
  for (; j + 4 <= n; j += 4)
    for (int l = 0; l < 4; ++l) s[l] += f(x[j + l]);
  for (; j < n; ++j) s[0] += f(x[j]);
  return (s[0] + s[1]) + (s[2] + s[3]);
}

// f for a sum of squares.
template <class T>
double square_in_double(T v) {
  return double(v) * double(v);
}

}  // namespace memgrad
