// sparsemax: forward, backward and the gradient-check case, side by side as in memgrad's ops/.
#include "sparsemax.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memgrad/engine/gradcheck.hpp>
#include <memgrad/engine/op_def.hpp>
#include <memgrad/engine/threads.hpp>

namespace custom {
namespace {

using memgrad::NodeId;
using memgrad::Tape;
using memgrad::Tensor;

MG_OP(sparsemax);  // registers the op: memgrad::gradcheck_all() now requires a case for it

int64_t folded_rows(const memgrad::Shape& s) {
  int64_t rows = 1;
  for (int i = 0; i + 1 < s.rank; ++i) rows *= s.dims[size_t(i)];
  return rows;
}

// One row: z sorted descending into s (scratch), k = max{k : 1 + k s_k > s_1 + ... + s_k},
// tau = (s_1 + ... + s_k - 1) / k, p = max(z - tau, 0).
template <class T>
void sparsemax_row(const T* z, T* p, T* s, int64_t n) {
  std::copy(z, z + n, s);
  std::sort(s, s + n, std::greater<T>());
  T cumulative = 0, tau = 0;
  for (int64_t k = 1; k <= n; ++k) {
    cumulative += s[k - 1];
    if (T(1) + T(k) * s[k - 1] > cumulative) tau = (cumulative - T(1)) / T(k);
  }
  for (int64_t j = 0; j < n; ++j) p[j] = std::max(z[j] - tau, T(0));
}

// On the support S = {j : p_j > 0}, dp_i/dz_j = delta_ij - 1/|S|; elsewhere 0. So
//     gx_j = [j in S] (g_j - mean_{i in S} g_i).
void sparsemax_backward(Tape& tape, NodeId id) {
  const NodeId ix = tape.input_id(id, 0);
  if (!tape.requires_grad(ix)) return;
  const Tensor& p = tape.value(id);
  const int64_t n = p.dim(-1), rows = folded_rows(p.shape());
  MG_DISPATCH(p.dtype(), T, {
    const T *pp = p.data<T>(), *g = tape.grad(id).data<T>();
    T* gx = tape.grad(ix).data<T>();
    memgrad::parallel_for_each(rows, [&](int64_t r) {
      const T *pr = pp + r * n, *gr = g + r * n;
      T mean = 0;
      int64_t support = 0;
      for (int64_t j = 0; j < n; ++j)
        if (pr[j] > T(0)) mean += gr[j], ++support;
      mean /= T(support);
      for (int64_t j = 0; j < n; ++j)
        if (pr[j] > T(0)) gx[r * n + j] += gr[j] - mean;
    });
  });
}

// The case: rows whose every |z_j - tau| is at least 1e-3, so that the central differences
// (eps 1e-6) never cross the edge of the support, where sparsemax has no derivative.
std::vector<memgrad::GradInput> away_from_kinks(memgrad::Rng& rng, const memgrad::Shape& shape) {
  for (;;) {
    Tensor x = memgrad::random_tensor(rng, shape, -1.5, 1.5);
    const int64_t n = x.dim(-1), rows = folded_rows(shape);
    std::vector<double> p(static_cast<size_t>(n)), scratch(static_cast<size_t>(n));
    bool clear = true;
    for (int64_t r = 0; r < rows && clear; ++r) {
      const double* z = x.data<double>() + r * n;
      sparsemax_row(z, p.data(), scratch.data(), n);
      double tau = 0;  // from any support element: tau = z_j - p_j
      for (int64_t j = 0; j < n; ++j)
        if (p[size_t(j)] > 0) tau = z[j] - p[size_t(j)];
      for (int64_t j = 0; j < n; ++j) clear = clear && std::abs(z[j] - tau) >= 1e-3;
    }
    if (clear) return {{x}};
  }
}

const bool kCases = [] {
  for (const memgrad::Shape& s : {memgrad::Shape{3, 5}, memgrad::Shape{1, 4},
                                  memgrad::Shape{2, 3, 6}, memgrad::Shape{2, 1}}) {
    memgrad::register_grad_case(
        {.op = "sparsemax",
         .name = "sparsemax/" + s.str(),
         .make_inputs = [s](memgrad::Rng& r) { return away_from_kinks(r, s); },
         .build = [](Tape&, std::span<const memgrad::Var> v) { return sparsemax(v[0]); },
         .note = "inputs kept 1e-3 away from the support's edge (z_j = tau)"});
  }
  return true;
}();

}  // namespace

memgrad::Var sparsemax(memgrad::Var x) {
  MG_CHECK(x.defined() && x.shape().rank >= 1 && x.dim(-1) >= 1,
           "sparsemax: needs a non-empty last axis, got ", x.shape());
  const int64_t n = x.dim(-1), rows = folded_rows(x.shape());
  Tape& tape = *x.tape;
  memgrad::Var y = tape.record(kOp_sparsemax, x.shape(), x.dtype(), {x}, sparsemax_backward);
  // Sorting scratch from the tape's arena: no heap allocation in a steady-state step.
  Tensor& scratch = tape.make_saved(y.id, x.shape(), x.dtype());
  MG_DISPATCH(x.dtype(), T, {
    const T* px = x.value().data<T>();
    T *py = tape.value(y.id).data<T>(), *ps = scratch.data<T>();
    memgrad::parallel_for_each(
        rows, [&](int64_t r) { sparsemax_row(px + r * n, py + r * n, ps + r * n, n); });
  });
  return y;
}

}  // namespace custom
