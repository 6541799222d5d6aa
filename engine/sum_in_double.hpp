// The sum of f(x[i]) over i in [0, n), accumulated in double with `Lanes` interleaved partial
// sums: independent additions overlap instead of each waiting on the one before. The partial sums
// are combined pairwise in a fixed order, so the result is the same on every run. sum_axis and
// l2_norm use four; the optimizer's gradient norm, a long sum that four chains of dependent adds
// hold to about an element per cycle, sixteen (about twice as fast over 3.4 MB of gradients).
#pragma once
#include <cstdint>

namespace memgrad {

template <int Lanes = 4, class T, class F>
double sum_in_double(const T* x, int64_t n, F f) {
  double s[Lanes] = {};
  int64_t j = 0;
  for (; j + Lanes <= n; j += Lanes)
    for (int l = 0; l < Lanes; ++l) s[l] += f(x[j + l]);
  for (; j < n; ++j) s[0] += f(x[j]);
  for (int width = Lanes / 2; width >= 1; width /= 2)  // ((s0 + s1) + (s2 + s3)) + ...
    for (int l = 0; l < width; ++l) s[l] = s[2 * l] + s[2 * l + 1];
  return s[0];
}

// f for a sum of squares.
template <class T>
double square_in_double(T v) {
  return double(v) * double(v);
}

}  // namespace memgrad
