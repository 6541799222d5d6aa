// Small matrix products through LIBXSMM's JIT-generated kernels, when the build found LIBXSMM
// (MEMGRAD_HAVE_LIBXSMM, Debian's libxsmm-dev). A memory network's step is hundreds of products
// with at most 50 rows and K, N of 64-512; OpenBLAS spends much of such a call on set-up and on
// repacking its operands, where a kernel generated for the exact shape reads them in place
// (`memgrad bench ops` measures both on these shapes). gemm() (engine/blas.hpp) sends a product
// here first and to OpenBLAS when this declines it; without LIBXSMM everything goes to OpenBLAS.
#pragma once
#include <cstdint>

namespace memgrad {

// The kernels gemm() uses for small products.
enum class GemmKernels { openblas, libxsmm };

// Whether this build has LIBXSMM.
bool libxsmm_built();
// The kernels in use: LIBXSMM when built, unless MEMGRAD_GEMM=openblas was set at start-up.
GemmKernels gemm_kernels();
// Switches the kernels (tests compare the two; `memgrad bench ops` times both). Asking for LIBXSMM
// in a build without it throws memgrad::Error.
void set_gemm_kernels(GemmKernels kernels);
// "libxsmm (cpx)" (with the instruction set LIBXSMM generates for) or "openblas".
const char* gemm_kernels_name();

// Whether gemm() reads a transposed right operand (trans_b) as fast as a plain one. LIBXSMM 1.17's
// kernels cannot read it transposed, so gemm() then copies it transposed first; a caller that
// multiplies by the same transposed matrix many times (a weight's g W^T at every time step) is
// better off transposing it once itself (ops/linalg.cpp does, once per backward pass).
bool gemm_reads_transposed_b();

// C[m,n] = alpha op(A) op(B) + beta C (row-major, as memgrad::gemm) with a LIBXSMM kernel, one
// call on the calling thread. Returns false, having done nothing, when LIBXSMM is not in use or
// cannot take the product (alpha other than 1, beta other than 0 or 1, a transposed B larger than
// the stack copy, sizes past the limits where OpenBLAS's blocking wins).
template <class T>
bool small_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

// The batched form: for each i in [0, batch), C_i = op(A_i) op(B_i) + beta C_i with the given
// element strides, one kernel looked up once and called per matrix. Same conditions as above.
template <class T>
bool small_gemm_batched(int64_t batch, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                        const T* a, int64_t stride_a, const T* b, int64_t stride_b, T beta, T* c,
                        int64_t stride_c);

// dst[cols, rows] (leading dim ld_dst) = src[rows, cols]^T (leading dim ld_src), in tiles.
template <class T>
void transpose(const T* src, int64_t rows, int64_t cols, int64_t ld_src, T* dst, int64_t ld_dst);

}  // namespace memgrad
