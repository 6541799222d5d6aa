#include "engine/blas_core.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <initializer_list>

extern "C" char* openblas_get_corename();

namespace memgrad {

const char* blas_core_name() { return openblas_get_corename(); }

namespace {
bool one_of(const char* core, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (std::strcmp(core, n) == 0) return true;
  return false;
}
bool has_avx512() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}
}  // namespace

void reexec_with_better_blas_core(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") || std::getenv("MEMGRAD_KEEP_BLAS_CORE")) return;
  const char* core = openblas_get_corename();
  if (!core) return;
  const char* better = nullptr;
  // Generic kernels on a CPU OpenBLAS does not know (recent Intel cores).
  if (one_of(core, {"Prescott", "Core2", "Nehalem", "Sandybridge"})) {
    if (has_avx512())
      better = "SkylakeX";
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      better = "Haswell";
  }
  // AVX2 kernels on a CPU with AVX-512 (AMD Zen 4 and 5, which 0.3.21 takes for Haswell or Zen):
  // SkylakeX's are 1.5-3x faster there on a memory network's products (`memgrad bench ops`).
  if (one_of(core, {"Haswell", "Zen"}) && has_avx512()) better = "SkylakeX";
  if (!better) return;
  setenv("OPENBLAS_CORETYPE", better, 1);
  execv("/proc/self/exe", argv);  // returns only on failure: then carry on with the slow kernels
}

}  // namespace memgrad
