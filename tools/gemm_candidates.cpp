#include "tools/gemm_candidates.hpp"

#include <cblas.h>
#include <dlfcn.h>

#include "engine/blas_core.hpp"
#include "engine/small_gemm.hpp"

namespace memgrad::cli {
namespace {

void openblas_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                    const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, int(m),
              int(n), int(k), 1.0f, a, int(lda), b, int(ldb), beta, c, int(ldc));
}

void libxsmm_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                   const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  small_gemm(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
}

// BLIS's typed API (bli_sgemm): strides per row and per column, so row-major needs no swapping.
using BliSgemm = void (*)(int transa, int transb, long m, long n, long k, const float* alpha,
                          const float* a, long rsa, long csa, const float* b, long rsb, long csb,
                          const float* beta, float* c, long rsc, long csc);
BliSgemm bli_sgemm_fn = nullptr;
constexpr int kBlisNoTranspose = 0, kBlisTranspose = 8;  // BLIS_NO_TRANSPOSE, BLIS_TRANSPOSE

void blis_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const float one = 1;
  bli_sgemm_fn(ta ? kBlisTranspose : kBlisNoTranspose, tb ? kBlisTranspose : kBlisNoTranspose, m, n,
               k, &one, a, lda, 1, b, ldb, 1, &beta, c, ldc, 1);
}

// oneDNN's dnnl_sgemm: row-major, transposes as 'N' / 'T'; returns a status.
using DnnlSgemm = int (*)(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha,
                          const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                          float* c, int64_t ldc);
DnnlSgemm dnnl_sgemm_fn = nullptr;

void onednn_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  dnnl_sgemm_fn(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
}

// The batched form of each library: one call per matrix, as memgrad's OpenBLAS path makes them.
template <SgemmFn F>
void per_matrix(int64_t batch, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a,
                const float* b, float* c) {
  for (int64_t i = 0; i < batch; ++i)
    F(ta, tb, m, n, k, a + i * m * k, ta ? m : k, b + i * k * n, tb ? k : n, 0.0f, c + i * m * n,
      n);
}

// LIBXSMM's batched form: one kernel for the whole batch (engine/small_gemm.hpp).
void libxsmm_batched(int64_t batch, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                     const float* a, const float* b, float* c) {
  small_gemm_batched(batch, ta, tb, m, n, k, a, m * k, b, k * n, 0.0f, c, m * n);
}

// Opens a library privately (its symbols never replace OpenBLAS's), or null.
void* open_private(const char* soname) {
  return dlopen(soname, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
}

// Keeps an OpenMP runtime a library brought in to one thread, as OpenBLAS is kept.
void one_openmp_thread(void* lib) {
  if (auto set = reinterpret_cast<void (*)(int)>(dlsym(lib, "omp_set_num_threads"))) set(1);
}

}  // namespace

std::vector<GemmCandidate> gemm_candidates() {
  std::vector<GemmCandidate> out;
  out.push_back({std::string("openblas ") + blas_core_name(), openblas_sgemm,
                 per_matrix<openblas_sgemm>, true});
  if (libxsmm_built()) {
    const GemmKernels before = gemm_kernels();
    set_gemm_kernels(GemmKernels::libxsmm);
    out.push_back({gemm_kernels_name(), libxsmm_sgemm, libxsmm_batched, false});
    set_gemm_kernels(before);
  }
  static void* blis = open_private("libblis.so.4");
  if (blis && !bli_sgemm_fn) {
    bli_sgemm_fn = reinterpret_cast<BliSgemm>(dlsym(blis, "bli_sgemm"));
    one_openmp_thread(blis);
    if (auto set = reinterpret_cast<void (*)(long)>(dlsym(blis, "bli_thread_set_num_threads")))
      set(1);
  }
  if (bli_sgemm_fn) {
    std::string name = "blis";
    auto arch_id = reinterpret_cast<int (*)()>(dlsym(blis, "bli_arch_query_id"));
    auto arch_name = reinterpret_cast<const char* (*)(int)>(dlsym(blis, "bli_arch_string"));
    if (arch_id && arch_name) name += std::string(" ") + arch_name(arch_id());
    out.push_back({name, blis_sgemm, per_matrix<blis_sgemm>, true});
  }
  static void* dnnl = open_private("libdnnl.so.2");
  if (dnnl && !dnnl_sgemm_fn) {
    dnnl_sgemm_fn = reinterpret_cast<DnnlSgemm>(dlsym(dnnl, "dnnl_sgemm"));
    one_openmp_thread(dnnl);
  }
  if (dnnl_sgemm_fn) out.push_back({"onednn", onednn_sgemm, per_matrix<onednn_sgemm>, true});
  return out;
}

}  // namespace memgrad::cli
