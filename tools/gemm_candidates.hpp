// The float32 GEMM libraries `memgrad bench ops` times on a memory network's products, so that the
// choice of kernels can be re-checked on any machine: OpenBLAS (always), LIBXSMM (when this build
// has it), and BLIS and oneDNN when their Debian libraries (libblis4, libdnnl2) are installed.
// BLIS and oneDNN are loaded at run time with dlopen, privately (BLIS exports the same cblas and
// Fortran BLAS names as OpenBLAS), so memgrad never depends on them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace memgrad::cli {

// C[m,n] = op(A) op(B) + beta C, row-major, one thread.
using SgemmFn = void (*)(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                         const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                         float* c, int64_t ldc);

// For i in [0, batch): C_i = op(A_i) op(B_i) (beta 0), matrices packed one after another.
using SgemmBatchedFn = void (*)(int64_t batch, bool trans_a, bool trans_b, int64_t m, int64_t n,
                                int64_t k, const float* a, const float* b, float* c);

struct GemmCandidate {
  std::string name;  // with the kernel family it runs, e.g. "openblas SkylakeX"
  SgemmFn sgemm;
  SgemmBatchedFn batched;  // one call per matrix for all but LIBXSMM
  // Whether it reads a transposed B as such (LIBXSMM 1.17 cannot: the bench gives it B^T made
  // beforehand, as memgrad's ops do once per backward pass).
  bool reads_transposed_b;
};

// The candidates available here, OpenBLAS first.
std::vector<GemmCandidate> gemm_candidates();

}  // namespace memgrad::cli
