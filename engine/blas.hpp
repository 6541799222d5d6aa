// Matrix products through OpenBLAS (cblas, row-major). Every matrix product in memgrad goes
// through gemm(); large products are split into fixed row blocks run as TBB tasks.
#pragma once
#include <cstdint>

#include "engine/tensor.hpp"

namespace memgrad {

// C[m,n] = alpha * op(A) * op(B) + beta * C, where op(X) is X or X^T; row-major with leading dims.
template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

// Batched: for each b in [0, batch), C_b = alpha * op(A_b) op(B_b) + beta * C_b, with the given
// element strides between consecutive matrices (a stride of 0 broadcasts one matrix to all).
template <class T>
void gemm_batched(int64_t batch, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                  T alpha, const T* a, int64_t stride_a, const T* b, int64_t stride_b, T beta, T* c,
                  int64_t stride_c);

}  // namespace memgrad
