// LIBXSMM's small-product kernels (engine/small_gemm.hpp) against OpenBLAS: every transpose
// combination, beta 0 and 1, float32 and float64, single and batched, on the shapes of a memory
// network's step; and the linalg ops' transposed weight, made once per backward pass, against
// OpenBLAS's transposed reads, over steps whose weights change. In a build without LIBXSMM,
// asking for it is an error.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "engine/blas.hpp"
#include "engine/error.hpp"
#include "engine/small_gemm.hpp"
#include "ops/ops.hpp"

using namespace memgrad;

namespace {

// Sets the kernels for a scope and restores the previous ones.
struct KernelsScope {
  GemmKernels before = gemm_kernels();
  explicit KernelsScope(GemmKernels k) { set_gemm_kernels(k); }
  ~KernelsScope() { set_gemm_kernels(before); }
};

template <class T>
std::vector<T> filled(int64_t n, double phase) {
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = T(std::sin(0.37 * double(i) + phase));
  return v;
}

// C from gemm (batch 1) or gemm_batched with the given kernels, starting from a filled C.
template <class T>
std::vector<T> product(GemmKernels kernels, int64_t batch, bool ta, bool tb, int64_t m, int64_t n,
                       int64_t k, T beta) {
  KernelsScope scope(kernels);
  const std::vector<T> a = filled<T>(batch * m * k, 0.1), b = filled<T>(batch * k * n, 0.7);
  // With beta 0, C starts as NaN: it must not be read (gradient buffers start uninitialised).
  std::vector<T> c = beta == T(0) ? std::vector<T>(size_t(batch * m * n), std::nan(""))
                                  : filled<T>(batch * m * n, 1.3);
  if (batch == 1)
    gemm<T>(ta, tb, m, n, k, T(1), a.data(), ta ? m : k, b.data(), tb ? k : n, beta, c.data(), n);
  else
    gemm_batched<T>(batch, ta, tb, m, n, k, T(1), a.data(), m * k, b.data(), k * n, beta, c.data(),
                    m * n);
  return c;
}

template <class T>
void check_against_openblas(double tolerance) {
  struct Dims {
    int64_t m, n, k;
  };
  // A memory's reads and keys (one head), an outer-like k = 1, odd sizes, and weights of a step;
  // rows (m, and k of A^T B) in whole 16-row blocks and with a remainder (small_gemm's kRowBlock).
  for (const Dims d :
       {Dims{1, 16, 64}, Dims{1, 64, 16}, Dims{16, 64, 1}, Dims{3, 5, 7}, Dims{50, 512, 128},
        Dims{50, 128, 512}, Dims{7, 33, 1}, Dims{64, 264, 128}, Dims{1, 512, 64},
        Dims{37, 40, 21}, Dims{32, 24, 48}, Dims{17, 9, 17}})
    for (int64_t batch : {1, 3})
      for (int flags = 0; flags < 4; ++flags)
        for (T beta : {T(0), T(1)}) {
          const bool ta = flags & 1, tb = flags & 2;
          CAPTURE(d.m);
          CAPTURE(d.n);
          CAPTURE(d.k);
          CAPTURE(batch);
          CAPTURE(flags);
          CAPTURE(double(beta));
          const auto x = product<T>(GemmKernels::libxsmm, batch, ta, tb, d.m, d.n, d.k, beta);
          const auto y = product<T>(GemmKernels::openblas, batch, ta, tb, d.m, d.n, d.k, beta);
          double worst = 0;
          size_t not_finite = 0;
          for (size_t i = 0; i < x.size(); ++i) {
            not_finite += !std::isfinite(x[i]) || !std::isfinite(y[i]);
            worst = std::max(worst, std::abs(double(x[i]) - double(y[i])));
          }
          CHECK(not_finite == 0);
          CHECK(worst <= tolerance * double(d.k + 1));
        }
}

Tensor iota(const Shape& s, double start, double step) {
  Tensor t = Tensor::zeros(s, DType::f64);
  double* p = t.data<double>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = start + step * double(i);
  return t;
}

// Gradients of a recurrent use of one weight over 4 steps (h = tanh(x_t W + b + h W_h)), on one
// tape reset between two rounds whose weights differ, as a training step's are.
std::vector<std::vector<double>> recurrent_grads(GemmKernels kernels) {
  KernelsScope scope(kernels);
  Tape tape;
  std::vector<std::vector<double>> out;
  for (int round = 0; round < 2; ++round) {
    tape.reset();
    const double shift = round * 0.25;  // the weights change between rounds
    Var w = tape.input(iota(Shape{24, 40}, -0.5 + shift, 1.0 / 960), true);
    Var wh = tape.input(iota(Shape{40, 40}, 0.3 - shift, -1.0 / 1600), true);
    Var bias = tape.input(iota(Shape{40}, 0.1, 0.01), true);
    Var h = tape.input(iota(Shape{5, 40}, 0.0, 0.001), true);
    for (int t = 0; t < 4; ++t) {
      Var x = tape.input(iota(Shape{5, 24}, 0.2 * t, 0.013), true);
      h = tanh(addmm(addmm(bias, x, w), h, wh));
    }
    tape.backward(sum(h));
    out.push_back(w.grad().to_vector());
    out.push_back(wh.grad().to_vector());
  }
  return out;
}

}  // namespace

TEST_CASE("small_gemm: LIBXSMM's products equal OpenBLAS's up to rounding") {
  if (!libxsmm_built()) {
    CHECK_THROWS_AS(set_gemm_kernels(GemmKernels::libxsmm), Error);
    CHECK(gemm_kernels() == GemmKernels::openblas);
    return;
  }
  check_against_openblas<float>(2e-6);
  check_against_openblas<double>(1e-14);
}

TEST_CASE("small_gemm: the transposed weight made once per backward pass is that pass's") {
  const auto reference = recurrent_grads(GemmKernels::openblas);
  const auto ours = recurrent_grads(libxsmm_built() ? GemmKernels::libxsmm : GemmKernels::openblas);
  REQUIRE(reference.size() == ours.size());
  CHECK(reference[0] != reference[2]);  // the rounds' weights differ, and so do their gradients
  for (size_t i = 0; i < reference.size(); ++i) {
    double worst = 0, scale = 0;
    for (size_t j = 0; j < reference[i].size(); ++j) {
      worst = std::max(worst, std::abs(reference[i][j] - ours[i][j]));
      scale = std::max(scale, std::abs(reference[i][j]));
    }
    CAPTURE(scale);
    CHECK(worst <= 1e-12 * (1 + scale));  // rounding; a stale b^T is off by about scale / 10
  }
}
