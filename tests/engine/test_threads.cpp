// Results must not depend on the thread count: per-sample tapes run in a TBB loop over the batch,
// parameter gradients are flushed in sample order, and large GEMMs split into fixed row blocks.
#include <doctest/doctest.h>

#include <memory>

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
