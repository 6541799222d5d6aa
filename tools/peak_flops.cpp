#include "tools/peak_flops.hpp"

#include <immintrin.h>
#include <pthread.h>
#include <time.h>

#include <algorithm>

namespace memgrad::cli {
namespace {

constexpr long kIters = 25'000'000;  // 150M cycles at 2 FMAs per cycle: about 0.05 s
constexpr int kChains = 12;          // independent accumulators hide the FMA latency on 2 ports

// One timed loop of kChains independent FMA chains on SIMD type V; sets `seconds`. A macro rather
// than a template because lambdas and templates do not inherit the caller's target attribute.
#define MG_FMA_LOOP(V, set1, fmadd, add, store_t, seconds)                                     \
  do {                                                                                         \
    V acc[kChains];                                                                            \
    for (auto& a : acc) a = set1(1.0);                                                         \
    const V m = set1(0.9999999), c = set1(1e-7);                                               \
    const double t0 = thread_cpu_seconds();                                                    \
    for (long i = 0; i < kIters; ++i) {                                                        \
      _Pragma("GCC unroll 12") for (int k = 0; k < kChains; ++k) acc[k] = fmadd(acc[k], m, c); \
    }                                                                                          \
    seconds = thread_cpu_seconds() - t0;                                                       \
    V sum = acc[0];                                                                            \
    for (int k = 1; k < kChains; ++k) sum = add(sum, acc[k]);                                  \
    asm volatile("" : : "x"(sum));                                                             \
  } while (0)

__attribute__((target("avx512f"))) double avx512_gflops(bool f32) {
  double s = 1;
  if (f32)
    MG_FMA_LOOP(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, float, s);
  else
    MG_FMA_LOOP(__m512d, _mm512_set1_pd, _mm512_fmadd_pd, _mm512_add_pd, double, s);
  return double(kIters) * kChains * (f32 ? 16 : 8) * 2 / s / 1e9;
}

__attribute__((target("avx2,fma"))) double avx2_gflops(bool f32) {
  double s = 1;
  if (f32)
    MG_FMA_LOOP(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, float, s);
  else
    MG_FMA_LOOP(__m256d, _mm256_set1_pd, _mm256_fmadd_pd, _mm256_add_pd, double, s);
  return double(kIters) * kChains * (f32 ? 8 : 4) * 2 / s / 1e9;
}

}  // namespace

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

PinToCurrentCore::PinToCurrentCore() {
  const int cpu = sched_getcpu();
  if (cpu < 0 || pthread_getaffinity_np(pthread_self(), sizeof old_, &old_) != 0) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0) core_ = cpu;
}

PinToCurrentCore::~PinToCurrentCore() {
  if (core_ >= 0) pthread_setaffinity_np(pthread_self(), sizeof old_, &old_);
}

const char* core_peak_isa() {
  if (__builtin_cpu_supports("avx512f")) return "AVX-512";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "AVX2+FMA";
  return "none";
}

double measure_core_peak_gflops(bool f32) {
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    if (__builtin_cpu_supports("avx512f"))
      best = std::max(best, avx512_gflops(f32));
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      best = std::max(best, avx2_gflops(f32));
  }
  return best;  // 0 when neither is available: the bench then prints no fraction
}

}  // namespace memgrad::cli
