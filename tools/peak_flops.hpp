// Measures the machine's floating-point peak with a tight loop of independent fused multiply-adds
// (AVX2+FMA when the CPU has them, plain scalar code otherwise), so GEMM figures can be read as a
// fraction of what the cores can actually do.
#pragma once

namespace memgrad::cli {
// GFLOP/s of one core for float32 (f32 = true) or float64.
double measure_core_peak_gflops(bool f32);
}  // namespace memgrad::cli
