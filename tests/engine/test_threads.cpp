// Results must not depend on the thread count: per-sample tapes run in a TBB loop over the batch,
// parameter gradients are flushed in sample order, and large GEMMs split into fixed row or column
// blocks.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "engine/blas.hpp"
#include "engine/threads.hpp"
#include "ops/elementwise.hpp"

using namespace memgrad;

namespace {

struct Result {
  std::vector<double> losses, grad, product;
};

// A batch of 16 samples, each its own graph (different lengths, like per-sample graphs of Adaptive
// Memory Networks), sharing one parameter; plus one GEMM large enough to be split into row blocks.
Result run(int threads) {
  ThreadScope scope(threads);
  ParameterSet params(DType::f64);
  Rng init(3);
  Parameter& w = params.add_uniform("w", Shape{8}, -1, 1, init);
  constexpr int kBatch = 16;
  std::vector<std::unique_ptr<Tape>> tapes;
  for (int b = 0; b < kBatch; ++b) tapes.push_back(std::make_unique<Tape>(b));
  std::vector<Var> outs(kBatch);
  Result r;
  r.losses.resize(kBatch);
  parallel_for_each(kBatch, [&](int64_t b) {
    Tape& tape = *tapes[size_t(b)];
    Var x = tape.input(Tensor::full(Shape{8}, DType::f64, 0.1 * double(b + 1)));
    Var h = tape.param(w);
    for (int step = 0; step < 3 + b % 4; ++step) h = tanh(add(mul(h, x), tape.param(w)));
    outs[size_t(b)] = h;
    tape.backward(h, Tensor::full(Shape{8}, DType::f64, 1.0), /*flush_params=*/false);
    r.losses[size_t(b)] = h.value().at(0);
  });
  for (auto& t : tapes) t->flush_param_grads();  // fixed order: sample 0, 1, ...
  r.grad = w.grad.to_vector();

  const int64_t n = 300;  // 300 x 300 x 300 is above the parallel threshold
  Rng rng(9);
  std::vector<double> a(size_t(n * n)), b(size_t(n * n)), c(size_t(n * n));
  for (auto& v : a) v = rng.uniform(-1, 1);
  for (auto& v : b) v = rng.uniform(-1, 1);
  gemm<double>(false, true, n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n);
  r.product = c;
  return r;
}

}  // namespace

TEST_CASE("values and gradients agree bit for bit between 1 and 2 threads") {
  const Result one = run(1), two = run(2);
  CHECK(active_threads() >= 1);
  CHECK(one.losses == two.losses);
  CHECK(one.grad == two.grad);
  CHECK(one.product == two.product);
  // And the parallel result is the real one: the gradient is non-trivial.
  double norm = 0;
  for (double g : one.grad) norm += g * g;
  CHECK(norm > 0);
}

TEST_CASE("several tapes can run at once on different threads") {
  ThreadScope scope(2);
  std::vector<double> results(64);
  parallel_for_each(64, [&](int64_t i) {
    Tape tape;
    Var x = tape.input(Tensor::full(Shape{4}, DType::f64, double(i)), true);
    Var y = mul(x, x);
    tape.backward(y, Tensor::full(Shape{4}, DType::f64, 1.0));
    results[size_t(i)] = x.grad().at(3);
  });
  for (int i = 0; i < 64; ++i) CHECK(results[size_t(i)] == 2.0 * i);
}

TEST_CASE("gemm with few rows and many columns (column blocks) is right for every transpose") {
  // m = 50 rows (a batch) is below the row-block size, and 50 x 600 x 100 multiply-adds is above
  // the parallel threshold: gemm splits the 600 columns into blocks of 256, 256 and 88.
  const int64_t m = 50, n = 600, k = 100;
  Rng rng(3);
  std::vector<double> a(size_t(m * k)), b(size_t(k * n)), c0(size_t(m * n));
  for (auto& v : a) v = rng.uniform(-1, 1);
  for (auto& v : b) v = rng.uniform(-1, 1);
  for (auto& v : c0) v = rng.uniform(-1, 1);
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      CAPTURE(ta);
      CAPTURE(tb);
      // op(A)[i,p] and op(B)[p,j] from row-major storage of A (m x k or k x m) and B.
      auto A = [&](int64_t i, int64_t p) {
        return ta ? a[size_t(p * m + i)] : a[size_t(i * k + p)];
      };
      auto B = [&](int64_t p, int64_t j) {
        return tb ? b[size_t(j * k + p)] : b[size_t(p * n + j)];
      };
      std::vector<double> want = c0;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double s = 0;
          for (int64_t p = 0; p < k; ++p) s += A(i, p) * B(p, j);
          want[size_t(i * n + j)] = 0.5 * s + 2.0 * c0[size_t(i * n + j)];
        }
      std::vector<double> got[2];
      for (int threads : {1, 2}) {
        ThreadScope scope(threads);
        std::vector<double>& c = got[threads - 1];
        c = c0;
        gemm<double>(ta, tb, m, n, k, 0.5, a.data(), ta ? m : k, b.data(), tb ? k : n, 2.0,
                     c.data(), n);
      }
      CHECK(got[0] == got[1]);
      double worst = 0;
      for (size_t e = 0; e < want.size(); ++e)
        worst = std::max(worst, std::fabs(got[0][e] - want[e]));
      CHECK(worst < 1e-12);
    }
}
