#include "engine/blas_core.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

extern "C" char* openblas_get_corename();

namespace memgrad {

const char* blas_core_name() { return openblas_get_corename(); }

void reexec_with_better_blas_core(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") || std::getenv("MEMGRAD_KEEP_BLAS_CORE")) return;
  const char* core = openblas_get_corename();
  if (!core || (std::strcmp(core, "Prescott") != 0 && std::strcmp(core, "Core2") != 0 &&
                std::strcmp(core, "Nehalem") != 0 && std::strcmp(core, "Sandybridge") != 0))
    return;
  const char* better = nullptr;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    better = "SkylakeX";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    better = "Haswell";
  if (!better) return;
  setenv("OPENBLAS_CORETYPE", better, 1);
  execv("/proc/self/exe", argv);  // returns only on failure: then carry on with the slow kernels
}

}  // namespace memgrad
