// LIBXSMM is column-major; memgrad's matrices are row-major. A row-major C[m,n] is a column-major
// C^T[n,m], and C^T = op(B)^T op(A)^T, so a row-major product is LIBXSMM's product with the
// operands swapped: M = n, N = m, K = k, its "A" our B and its "B" our A. Our trans_a becomes its
// TRANS_B, which its kernels take; our trans_b would be its TRANS_A, which LIBXSMM 1.17 does not
// generate, so a transposed B is first copied transposed (small ones only, on the stack).
#include "engine/small_gemm.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "engine/error.hpp"

#ifdef MEMGRAD_HAVE_LIBXSMM
#include <libxsmm.h>
#endif

namespace memgrad {
namespace {

// A transposed B is copied to the stack when it has at most this many elements (32 KiB of
// float32): a memory's [16, 64] rows, not a [128, 512] weight (ops/linalg.cpp transposes those
// once per backward pass).
constexpr int64_t kMaxTransposedB = 8192;
// Above this many bytes of B, OpenBLAS's cache blocking wins: LIBXSMM's kernels stream B once per
// block of C's columns (measured with `memgrad bench ops`: square products of 1024).
constexpr int64_t kMaxBBytes = int64_t(1) << 20;
// LIBXSMM generates, and keeps, a kernel per shape (about 8 KB of code each), and a batch's rows
// change from step to step as its sequences end: dmnc-late on sum2seq made 863 kernels (7 MB),
// most of them one per row count 1-50 of the same product. A product of more rows runs as blocks
// of this many and a remainder, so that 16 kernels at most serve every row count.
constexpr int64_t kRowBlock = 16;
// A B^T with at most this many outputs per matrix is computed as dot products (dot_product_nt).
constexpr int64_t kMaxDotOutputs = 128;

// dst = A B^T for small products, in the dot-product form: C[i, j] = beta C[i, j] + sum_p A[i, p]
// B[j, p], rows of A and B contiguous. 16 partial sums per dot, which the compiler keeps in vector
// registers; for a memory's few rows (a read head's key against 16 slots) this beats copying B
// transposed for a kernel.
template <class T>
void dot_product_nt(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
                    int64_t ldb, T beta, T* c, int64_t ldc) {
  constexpr int64_t kPartial = 16;
  const int64_t body = k - k % kPartial;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const T *x = a + i * lda, *y = b + j * ldb;
      T acc[kPartial] = {};
      for (int64_t p = 0; p < body; p += kPartial)
        for (int64_t q = 0; q < kPartial; ++q) acc[q] += x[p + q] * y[p + q];
      T s = 0;
      for (int64_t p = body; p < k; ++p) s += x[p] * y[p];
      for (int64_t q = 0; q < kPartial; ++q) s += acc[q];
      c[i * ldc + j] = beta == T(0) ? s : beta * c[i * ldc + j] + s;
    }
}

GemmKernels initial_kernels() {
  const char* env = std::getenv("MEMGRAD_GEMM");
  if (env && std::strcmp(env, "openblas") == 0) return GemmKernels::openblas;
  return libxsmm_built() ? GemmKernels::libxsmm : GemmKernels::openblas;
}

std::atomic<GemmKernels>& kernels_in_use() {
  static std::atomic<GemmKernels> k{initial_kernels()};
  return k;
}

#ifdef MEMGRAD_HAVE_LIBXSMM
using XBlas = libxsmm_blasint;

// The kernel for column-major C[M,N] = A[M,K] op(B) + beta C, or null.
libxsmm_smmfunction dispatch(float, XBlas M, XBlas N, XBlas K, XBlas lda, XBlas ldb, XBlas ldc,
                             float beta, int flags) {
  const float alpha = 1;
  return libxsmm_smmdispatch(M, N, K, &lda, &ldb, &ldc, &alpha, &beta, &flags, nullptr);
}
libxsmm_dmmfunction dispatch(double, XBlas M, XBlas N, XBlas K, XBlas lda, XBlas ldb, XBlas ldc,
                             double beta, int flags) {
  const double alpha = 1;
  return libxsmm_dmmdispatch(M, N, K, &lda, &ldb, &ldc, &alpha, &beta, &flags, nullptr);
}

// Whether LIBXSMM takes this product (see small_gemm's comment).
template <class T>
bool takes(bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, T beta) {
  if (kernels_in_use().load(std::memory_order_relaxed) != GemmKernels::libxsmm) return false;
  if (alpha != T(1) || (beta != T(0) && beta != T(1))) return false;
  if (m <= 0 || n <= 0 || k <= 0) return false;
  if (k * n * int64_t(sizeof(T)) > kMaxBBytes) return false;
  return !trans_b || n * k <= kMaxTransposedB || m * n <= kMaxDotOutputs;
}
#endif

}  // namespace

bool libxsmm_built() {
#ifdef MEMGRAD_HAVE_LIBXSMM
  return true;
#else
  return false;
#endif
}

GemmKernels gemm_kernels() { return kernels_in_use().load(); }

void set_gemm_kernels(GemmKernels kernels) {
  MG_CHECK(kernels != GemmKernels::libxsmm || libxsmm_built(),
           "gemm kernels: this build has no LIBXSMM (install libxsmm-dev and reconfigure)");
  kernels_in_use().store(kernels);
}

const char* gemm_kernels_name() {
#ifdef MEMGRAD_HAVE_LIBXSMM
  // Asked only when LIBXSMM is in use: the question initialises it, and its code registry takes
  // 10 MB (a bench run with MEMGRAD_GEMM=openblas measured them).
  if (gemm_kernels() == GemmKernels::libxsmm) {
    static const std::string name = std::string("libxsmm (") + libxsmm_get_target_arch() + ")";
    return name.c_str();
  }
#endif
  return "openblas";
}

bool gemm_reads_transposed_b() { return gemm_kernels() != GemmKernels::libxsmm; }

#ifdef MEMGRAD_HAVE_LIBXSMM
// The products of small_gemm_batched with a transposed B: each B_i [n, k] copied as [k, n] on the
// stack first (kept out of the plain path, which then reserves no stack for it).
template <class T, class Kernel>
[[gnu::noinline]] void run_transposed_b(Kernel kernel, int64_t batch, int64_t n, int64_t k,
                                        int64_t ldb, const T* a, int64_t stride_a, const T* b,
                                        int64_t stride_b, T* c, int64_t stride_c) {
  alignas(64) T bt[kMaxTransposedB];
  for (int64_t i = 0; i < batch; ++i) {
    transpose(b + i * stride_b, n, k, ldb, bt, n);
    kernel(bt, a + i * stride_a, c + i * stride_c);
  }
}

// C_i = op(A_i) op(B_i) + beta C_i for i in [0, batch), row-major with leading dims lda, ldb, ldc.
template <class T>
bool run(int64_t batch, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a,
         int64_t lda, int64_t stride_a, const T* b, int64_t ldb, int64_t stride_b, T beta, T* c,
         int64_t ldc, int64_t stride_c) {
  // A B^T with few outputs (a read head's key against a memory's slots): dot products, no copy.
  if (trans_b && !trans_a && k >= 16 && m * n <= kMaxDotOutputs) {
    for (int64_t i = 0; i < batch; ++i)
      dot_product_nt(m, n, k, a + i * stride_a, lda, b + i * stride_b, ldb, beta, c + i * stride_c,
                     ldc);
    return true;
  }
  // One product's rows of C in blocks of kRowBlock (see there): kernels for a full block and
  // for the remainder, each row computed as by one kernel for all rows.
  if (batch == 1 && !trans_a && !trans_b && m > kRowBlock) {
    const int64_t rest = m % kRowBlock, full = m - rest;
    const auto block = dispatch(T(), XBlas(n), XBlas(kRowBlock), XBlas(k), XBlas(ldb), XBlas(lda),
                                XBlas(ldc), beta, 0);
    const auto tail = rest ? dispatch(T(), XBlas(n), XBlas(rest), XBlas(k), XBlas(ldb), XBlas(lda),
                                      XBlas(ldc), beta, 0)
                           : block;
    if (!block || !tail) return false;
    for (int64_t r = 0; r < full; r += kRowBlock) block(b, a + r * lda, c + r * ldc);
    if (rest) tail(b, a + full * lda, c + full * ldc);
    return true;
  }
  // A^T B over many rows (a weight's gradient, k = the batch's rows): the rows in blocks too,
  // the first block with the caller's beta and the others added on.
  if (batch == 1 && trans_a && !trans_b && k > kRowBlock) {
    const int64_t rest = k % kRowBlock, full = k - rest;
    auto kernel_for = [&](int64_t kk, T b0) {
      return dispatch(T(), XBlas(n), XBlas(m), XBlas(kk), XBlas(ldb), XBlas(lda), XBlas(ldc), b0,
                      LIBXSMM_GEMM_FLAG_TRANS_B);
    };
    const auto first = kernel_for(kRowBlock, beta), more = kernel_for(kRowBlock, T(1));
    const auto tail = rest ? kernel_for(rest, T(1)) : more;
    if (!first || !more || !tail) return false;
    for (int64_t p = 0; p < full; p += kRowBlock)
      (p == 0 ? first : more)(b + p * ldb, a + p * lda, c);
    if (rest) tail(b + full * ldb, a + full * lda, c);
    return true;
  }
  // B as LIBXSMM's A: [k, n] row-major; a transposed one is copied so (leading dim n).
  const auto kernel =
      dispatch(T(), XBlas(n), XBlas(m), XBlas(k), XBlas(trans_b ? n : ldb), XBlas(lda), XBlas(ldc),
               beta, trans_a ? LIBXSMM_GEMM_FLAG_TRANS_B : 0);
  if (!kernel) return false;
  if (trans_b) {
    run_transposed_b(kernel, batch, n, k, ldb, a, stride_a, b, stride_b, c, stride_c);
    return true;
  }
  for (int64_t i = 0; i < batch; ++i) kernel(b + i * stride_b, a + i * stride_a, c + i * stride_c);
  return true;
}
#endif

template <class T>
bool small_gemm([[maybe_unused]] bool trans_a, [[maybe_unused]] bool trans_b,
                [[maybe_unused]] int64_t m, [[maybe_unused]] int64_t n, [[maybe_unused]] int64_t k,
                [[maybe_unused]] T alpha, [[maybe_unused]] const T* a, [[maybe_unused]] int64_t lda,
                [[maybe_unused]] const T* b, [[maybe_unused]] int64_t ldb, [[maybe_unused]] T beta,
                [[maybe_unused]] T* c, [[maybe_unused]] int64_t ldc) {
#ifdef MEMGRAD_HAVE_LIBXSMM
  return takes(trans_b, m, n, k, alpha, beta) &&
         run(1, trans_a, trans_b, m, n, k, a, lda, 0, b, ldb, 0, beta, c, ldc, 0);
#else
  return false;
#endif
}

template <class T>
bool small_gemm_batched([[maybe_unused]] int64_t batch, [[maybe_unused]] bool trans_a,
                        [[maybe_unused]] bool trans_b, [[maybe_unused]] int64_t m,
                        [[maybe_unused]] int64_t n, [[maybe_unused]] int64_t k,
                        [[maybe_unused]] const T* a, [[maybe_unused]] int64_t stride_a,
                        [[maybe_unused]] const T* b, [[maybe_unused]] int64_t stride_b,
                        [[maybe_unused]] T beta, [[maybe_unused]] T* c,
                        [[maybe_unused]] int64_t stride_c) {
#ifdef MEMGRAD_HAVE_LIBXSMM
  return takes(trans_b, m, n, k, T(1), beta) &&
         run(batch, trans_a, trans_b, m, n, k, a, trans_a ? m : k, stride_a, b, trans_b ? k : n,
             stride_b, beta, c, n, stride_c);
#else
  return false;
#endif
}

template <class T>
void transpose(const T* src, int64_t rows, int64_t cols, int64_t ld_src, T* dst, int64_t ld_dst) {
  constexpr int64_t kTile = 16;  // a tile's rows and columns stay in L1 while it is copied
  for (int64_t r0 = 0; r0 < rows; r0 += kTile)
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = c0; c < c1; ++c) dst[c * ld_dst + r] = src[r * ld_src + c];
    }
}

template void transpose<float>(const float*, int64_t, int64_t, int64_t, float*, int64_t);
template void transpose<double>(const double*, int64_t, int64_t, int64_t, double*, int64_t);
template bool small_gemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t,
                                const float*, int64_t, float, float*, int64_t);
template bool small_gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*,
                                 int64_t, const double*, int64_t, double, double*, int64_t);
template bool small_gemm_batched<float>(int64_t, bool, bool, int64_t, int64_t, int64_t,
                                        const float*, int64_t, const float*, int64_t, float, float*,
                                        int64_t);
template bool small_gemm_batched<double>(int64_t, bool, bool, int64_t, int64_t, int64_t,
                                         const double*, int64_t, const double*, int64_t, double,
                                         double*, int64_t);

}  // namespace memgrad
