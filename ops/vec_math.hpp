// exp, sigmoid and tanh on kLanes float32 lanes at once. std::exp and std::tanh are calls into libm
// that keep a loop scalar, and GCC will not turn the selects these functions need into vector
// code by itself (it must assume a comparison can trap), so they are written on GCC's vector
// extension type: `a + b`, `a < b ? x : y` and friends act lane by lane and compile to SIMD
// instructions (32 bytes, 8 lanes, where the build targets AVX2 (MEMGRAD_NATIVE on such a CPU);
// else 16 bytes: SSE2, present on every x86-64, and NEON on ARM). On a training step
// with hundreds of thousands of gate activations the scalar libm calls cost more than the matrix
// products. Accuracy: a few ulp (tests/ops/test_elementwise.cpp); float64 (gradient checks) keeps
// the std:: functions.
#pragma once
#include <bit>
#include <cstdint>
#include <cstring>

namespace memgrad::vec {

#if defined(__AVX2__)
inline constexpr int kLanes = 8;
#else
inline constexpr int kLanes = 4;
#endif
using f32v = float __attribute__((vector_size(4 * kLanes)));
using i32v = int32_t __attribute__((vector_size(4 * kLanes)));

inline f32v splat(float v) { return f32v{} + v; }

// Lane-wise |x| and copysign(m, s): the sign is bit 31.
inline f32v abs(f32v x) { return std::bit_cast<f32v>(std::bit_cast<i32v>(x) & 0x7fffffff); }
inline f32v copysign(f32v m, f32v s) {
  const i32v sign = std::bit_cast<i32v>(s) & int32_t(0x80000000u);
  return std::bit_cast<f32v>((std::bit_cast<i32v>(m) & 0x7fffffff) | sign);
}

// e^x for x in [-87.3, 88.3] (inputs outside are clamped: every caller saturates there). Cephes'
// expf: x = n ln2 + r with |r| <= ln2/2, a degree-6 polynomial for e^r, and 2^n put together in
// the exponent bits. Max relative error about 2e-7 (1 to 2 ulp).
inline f32v exp_clamped(f32v x) {
  x = x < -87.3f ? splat(-87.3f) : x;
  x = x > 88.3f ? splat(88.3f) : x;
  // n = round(x / ln2): adding and subtracting 1.5 * 2^23 rounds to the nearest integer.
  const f32v n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  // r = x - n ln2, with ln2 split in two so that n * 0.693359375 is exact.
  const f32v r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  f32v p = splat(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // 2^n for n in [-126, 127]: the biased exponent n + 127 in bits 23..30.
  const i32v biased = __builtin_convertvector(n, i32v) + 127;
  return p * std::bit_cast<f32v>(biased << 23);
}

// 1 / (1 + e^-x). Below x = -88.3 the exp is clamped and the result is a tiny positive number
// (about 4e-39) instead of an even tinier one.
inline f32v sigmoid(f32v x) { return 1.0f / (1.0f + exp_clamped(-x)); }

// Cephes' tanhf: an odd polynomial for |x| < 0.625 (where 1 - 2/(e^2x + 1) would lose digits to
// cancellation), 1 - 2/(e^{2|x|} + 1) with x's sign elsewhere; both are computed and each lane
// takes one. For |x| > 44 the clamped exp gives exactly 1.
inline f32v tanh(f32v x) {
  const f32v ax = abs(x), z = x * x;
  f32v p = splat(-5.70498872745e-3f);
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const f32v small = p * z * x + x;
  const f32v large = copysign(1.0f - 2.0f / (exp_clamped(2.0f * ax) + 1.0f), x);
  return ax < 0.625f ? small : large;
}

// log(1 + e^x), without overflow: max(x, 0) + log1p(u) with u = e^-|x| in (0, 1], and
// log1p(u) = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...) with s = u / (2 + u) in (0, 1/3]: eight
// terms reach float precision, and relative precision holds for tiny u (x far below 0), where
// log(1 + u) from a rounded 1 + u would not.
inline f32v softplus(f32v x) {
  const f32v u = exp_clamped(-abs(x));
  const f32v s = u / (2.0f + u), z = s * s;
  f32v p = splat(1.0f / 15);
  p = p * z + 1.0f / 13;
  p = p * z + 1.0f / 11;
  p = p * z + 1.0f / 9;
  p = p * z + 1.0f / 7;
  p = p * z + 1.0f / 5;
  p = p * z + 1.0f / 3;
  const f32v log1p_u = 2.0f * (p * z * s + s);
  return (x > 0.0f ? x : splat(0.0f)) + log1p_u;
}

// y[i] = f(x[i]) for i in [0, n), kLanes at a time; the last partial group goes through a
// zero-padded copy. x and y may be the same array.
template <class F>
void map(const float* x, float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    f32v v;
    std::memcpy(&v, x + i, sizeof v);  // unaligned load
    v = f(v);
    std::memcpy(y + i, &v, sizeof v);
  }
  if (i < n) {
    float buf[kLanes] = {};
    std::memcpy(buf, x + i, size_t(n - i) * sizeof(float));
    f32v v;
    std::memcpy(&v, buf, sizeof v);
    v = f(v);
    std::memcpy(buf, &v, sizeof v);
    std::memcpy(y + i, buf, size_t(n - i) * sizeof(float));
  }
}

// The same functions on one float (tests, and scalar callers).
template <class F>
float one(float x, F f) {
  float y;
  map(&x, &y, 1, f);
  return y;
}

}  // namespace memgrad::vec
