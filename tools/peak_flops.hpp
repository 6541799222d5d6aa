// Measures the machine's floating-point peak with a tight loop of independent fused multiply-adds
// (AVX-512 or AVX2+FMA when the CPU has them), so GEMM figures can be read as a fraction of what a
// core can do. On a shared machine a wall-clock loop loses to whatever else runs; the loop is
// timed in the thread's CPU time instead, and the bench repeats it between its GEMMs and keeps the
// best, so that the peak is a ceiling. It still is not one when another thread shares the core's
// FMA units (a hyperthread sibling): the bench then sees a GEMM above it and says so.
#pragma once
#include <sched.h>

namespace memgrad::cli {
// GFLOP/s of one core for float32 (f32 = true) or float64: the best of 3 loops of about 0.05 s
// each; 0 when the CPU has neither AVX-512 nor AVX2+FMA.
double measure_core_peak_gflops(bool f32);

// The instructions that loop uses: "AVX-512", "AVX2+FMA" or "none".
const char* core_peak_isa();

// CPU time of the calling thread, in seconds: time it actually ran, not time it waited.
double thread_cpu_seconds();

// Pins the calling thread to the core it is running on, for the scope's lifetime, so that a
// measurement is not moved between cores (and their caches) half-way; restores the old affinity.
class PinToCurrentCore {
 public:
  PinToCurrentCore();
  ~PinToCurrentCore();
  PinToCurrentCore(const PinToCurrentCore&) = delete;
  PinToCurrentCore& operator=(const PinToCurrentCore&) = delete;
  int core() const { return core_; }  // -1 when pinning failed

 private:
  cpu_set_t old_{};
  int core_ = -1;
};
}  // namespace memgrad::cli
