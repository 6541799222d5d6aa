// OpenBLAS 0.3.21 (Debian 12) does not recognise recent Intel cores (Sapphire Rapids and later)
// and falls back to its generic "Prescott" SSE3 kernels, 3-4 times slower than the AVX-512 ones
// the CPU can run. The kernel is chosen when the library loads, from OPENBLAS_CORETYPE, so the
// only fix from inside a program is to set that variable and start again.
#pragma once

namespace memgrad {

// The OpenBLAS kernel family in use, e.g. "SkylakeX", "Haswell", "Prescott".
const char* blas_core_name();

// If OpenBLAS fell back to generic kernels on a CPU with AVX-512 (or AVX2), OPENBLAS_CORETYPE is
// unset and MEMGRAD_KEEP_BLAS_CORE is unset, sets OPENBLAS_CORETYPE to SkylakeX (or Haswell) and
// re-executes the program with the same arguments. Returns only when nothing needs to change.
void reexec_with_better_blas_core(char** argv);

}  // namespace memgrad
