#include "engine/blas.hpp"

#include <cblas.h>

#include <algorithm>

#include "engine/small_gemm.hpp"
#include "engine/threads.hpp"

namespace memgrad {
namespace {

// OpenBLAS would start its own thread pool on first use; TBB owns parallelism here.
const bool kBlasSingleThreaded = (openblas_set_num_threads(1), true);

// Products below this many multiply-adds run as one BLAS call; above, as row blocks of a fixed
// size so that the result does not depend on the thread count.
constexpr int64_t kParallelFlops = int64_t(1) << 21;
constexpr int64_t kRowBlock = 64;

// One product on this thread: a LIBXSMM kernel when it takes it (engine/small_gemm.hpp), else
// OpenBLAS.
void blas_call(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
               int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (small_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)) return;
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, int(m),
              int(n), int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
}
void blas_call(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
               int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  if (small_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)) return;
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, int(m),
              int(n), int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
}

}  // namespace

template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  (void)kBlasSingleThreaded;
  if (m == 0 || n == 0) return;
  if (k == 0) {  // BLAS leaves C untouched when k == 0 only if beta == 1; make it explicit.
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
    return;
  }
  if (m * n * k < kParallelFlops || m <= kRowBlock) {
    blas_call(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  const int64_t blocks = (m + kRowBlock - 1) / kRowBlock;
  parallel_for_each(blocks, [&](int64_t blk) {
    const int64_t r0 = blk * kRowBlock;
    const int64_t rows = std::min(kRowBlock, m - r0);
    // Row r of op(A) starts at a + r*lda without transpose, at a + r with it.
    const T* a_rows = trans_a ? a + r0 : a + r0 * lda;
    blas_call(trans_a, trans_b, rows, n, k, alpha, a_rows, lda, b, ldb, beta, c + r0 * ldc, ldc);
  });
}

template <class T>
void gemm_batched(int64_t batch, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                  T alpha, const T* a, int64_t stride_a, const T* b, int64_t stride_b, T beta, T* c,
                  int64_t stride_c) {
  const int64_t lda = trans_a ? m : k;
  const int64_t ldb = trans_b ? k : n;
  auto one = [&](int64_t i) {
    blas_call(trans_a, trans_b, m, n, k, alpha, a + i * stride_a, lda, b + i * stride_b, ldb, beta,
              c + i * stride_c, n);
  };
  if (k == 0 || batch * m * n * k < kParallelFlops) {
    // One kernel over the whole batch when LIBXSMM takes it, else one BLAS call per matrix.
    if (alpha == T(1) && small_gemm_batched(batch, trans_a, trans_b, m, n, k, a, stride_a, b,
                                            stride_b, beta, c, stride_c))
      return;
    for (int64_t i = 0; i < batch; ++i)
      gemm(trans_a, trans_b, m, n, k, alpha, a + i * stride_a, lda, b + i * stride_b, ldb, beta,
           c + i * stride_c, n);
    return;
  }
  parallel_for_each(batch, one);
}

template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t,
                          const float*, int64_t, float, float*, int64_t);
template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, int64_t,
                           const double*, int64_t, double, double*, int64_t);
template void gemm_batched<float>(int64_t, bool, bool, int64_t, int64_t, int64_t, float,
                                  const float*, int64_t, const float*, int64_t, float, float*,
                                  int64_t);
template void gemm_batched<double>(int64_t, bool, bool, int64_t, int64_t, int64_t, double,
                                   const double*, int64_t, const double*, int64_t, double, double*,
                                   int64_t);

}  // namespace memgrad
