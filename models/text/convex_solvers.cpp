// Coordinate-descent solvers of the linear baselines (see convex_solvers.hpp).
#include "models/text/convex_solvers.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "engine/error.hpp"
#include "engine/rng.hpp"

namespace memgrad::text {
namespace {

// log(1 + e^z), without overflow.
double log1pexp(double z) { return z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z)); }
double sigmoid(double z) {
  if (z >= 0) return 1 / (1 + std::exp(-z));
  const double e = std::exp(z);
  return e / (1 + e);
}
double xlogx(double q) { return q > 0 ? q * std::log(q) : 0.0; }

// The smooth part's state at one iterate: margins z_i and probabilities p_i.
struct Logistic {
  std::span<const double> y;
  std::vector<double> z, p;
  double n = 0;
  void set_margins(const SparseLines& cols, std::span<const double> w, double b) {
    z.assign(y.size(), b);
    for (int64_t j = 0; j < cols.lines; ++j)
      if (w[size_t(j)] != 0)
        for (int64_t k = cols.start[size_t(j)]; k < cols.start[size_t(j) + 1]; ++k)
          z[size_t(cols.index[size_t(k)])] += w[size_t(j)] * cols.value[size_t(k)];
    p.resize(z.size());
    for (size_t i = 0; i < z.size(); ++i) p[i] = sigmoid(z[i]);
  }
  double loss() const {
    double s = 0;
    for (size_t i = 0; i < z.size(); ++i) s += log1pexp(z[i]) - y[i] * z[i];
    return s / n;
  }
  // Newton steps on the intercept alone, with halving while the loss does not decrease, until
  // the mean residual is below `tol` (or the loss stops changing).
  void optimise_intercept(double& b, double tol, int max_steps) {
    for (int it = 0; it < max_steps; ++it) {
      double g = 0, h = 0;
      for (size_t i = 0; i < z.size(); ++i) g += p[i] - y[i], h += p[i] * (1 - p[i]);
      g /= n;
      h /= n;
      if (std::abs(g) < tol || h <= 0) return;
      // Halve the step until the loss decreases or, where the loss is flat to rounding, the
      // derivative shrinks.
      const double before = loss();
      double step = -g / h;
      for (int half = 0; half < 40; ++half, step *= 0.5) {
        double g_new = 0;
        for (size_t i = 0; i < z.size(); ++i) g_new += sigmoid(z[i] + step) - y[i];
        for (size_t i = 0; i < z.size(); ++i) z[i] += step;
        if (loss() <= before || std::abs(g_new / n) < std::abs(g)) break;
        for (size_t i = 0; i < z.size(); ++i) z[i] -= step;
      }
      b += step;
      for (size_t i = 0; i < z.size(); ++i) p[i] = sigmoid(z[i]);
    }
  }
};

double l1_norm(std::span<const double> w) {
  double s = 0;
  for (const double v : w) s += std::abs(v);
  return s;
}

// Primal and dual values at the iterate (b made optimal first): convex_solvers.hpp.
SolverReport gap_at(const SparseLines& cols, Logistic& f, double lambda, std::span<const double> w,
                    double& b) {
  f.optimise_intercept(b, 1e-13, 50);
  double worst = 0;  // |X^T r|_inf / n with r = y - p
  for (int64_t j = 0; j < cols.lines; ++j) {
    double g = 0;
    for (int64_t k = cols.start[size_t(j)]; k < cols.start[size_t(j) + 1]; ++k)
      g += cols.value[size_t(k)] *
           (f.y[size_t(cols.index[size_t(k)])] - f.p[size_t(cols.index[size_t(k)])]);
    worst = std::max(worst, std::abs(g) / f.n);
  }
  const double s = worst > lambda ? lambda / worst : 1.0;
  double dual = 0;
  for (size_t i = 0; i < f.z.size(); ++i) {
    const double q = f.y[i] - s * (f.y[i] - f.p[i]);
    dual -= xlogx(q) + xlogx(1 - q);
  }
  SolverReport r;
  r.primal = f.loss() + lambda * l1_norm(w);
  r.dual = dual / f.n;
  return r;
}

bool one_class(std::span<const double> y) {
  return std::all_of(y.begin(), y.end(), [&](double v) { return v == y[0]; });
}

}  // namespace

double l1_logreg_lambda_max(const SparseLines& columns, std::span<const double> y) {
  const double n = double(y.size());
  const double mean = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double worst = 0;
  for (int64_t j = 0; j < columns.lines; ++j) {
    double g = 0;
    for (int64_t k = columns.start[size_t(j)]; k < columns.start[size_t(j) + 1]; ++k)
      g += columns.value[size_t(k)] * (y[size_t(columns.index[size_t(k)])] - mean);
    worst = std::max(worst, std::abs(g) / n);
  }
  return worst;
}

SolverReport l1_logreg_gap(const SparseLines& columns, std::span<const double> y, double lambda,
                           std::span<const double> w, double& b) {
  Logistic f{y, {}, {}, double(y.size())};
  f.set_margins(columns, w, b);
  return gap_at(columns, f, lambda, w, b);
}

SolverReport solve_l1_logreg(const SparseLines& columns, std::span<const double> y, double lambda,
                             std::span<double> w, double& b, const SolverOptions& options) {
  MG_CHECK(int64_t(w.size()) == columns.lines && int64_t(y.size()) == columns.width && !y.empty(),
           "l1-logreg solver: ", w.size(), " weights and ", y.size(), " labels for a ",
           columns.width, " x ", columns.lines, " matrix");
  MG_CHECK(lambda > 0, "l1-logreg solver: lambda must be > 0, got ", lambda);
  const double n = double(y.size());
  if (one_class(y)) {
    std::fill(w.begin(), w.end(), 0.0);
    b = (y[0] > 0 ? 1 : -1) * std::log(4 * n);
    SolverReport r;
    r.converged = true;
    return r;
  }
  Logistic f{y, {}, {}, n};
  f.set_margins(columns, w, b);
  SolverReport r;
  constexpr double kSigma = 0.01, kCurvature = 1e-12;
  for (int64_t sweeps = 0;; ++sweeps) {
    r = gap_at(columns, f, lambda, w, b);  // (also Newton steps on the intercept)
    r.sweeps = sweeps;
    if (r.primal - r.dual <= options.tolerance * r.primal) {
      r.converged = true;
      break;
    }
    if (r.sweeps >= options.max_sweeps) break;
    for (int64_t j = 0; j < columns.lines; ++j) {
      const int64_t k0 = columns.start[size_t(j)], k1 = columns.start[size_t(j) + 1];
      if (k0 == k1) continue;
      double g = 0, h = 0;
      for (int64_t k = k0; k < k1; ++k) {
        const size_t i = size_t(columns.index[size_t(k)]);
        const double x = columns.value[size_t(k)];
        g += x * (f.p[i] - y[i]);
        h += x * x * f.p[i] * (1 - f.p[i]);
      }
      g /= n;
      h = h / n + kCurvature;
      const double wj = w[size_t(j)];
      // argmin_d g d + h d^2 / 2 + lambda |wj + d|
      double d;
      if (g + lambda <= h * wj)
        d = -(g + lambda) / h;
      else if (g - lambda >= h * wj)
        d = -(g - lambda) / h;
      else
        d = -wj;
      if (d == 0) continue;
      // Armijo: F(w + a d e_j) - F(w) <= sigma a (g d + lambda (|wj + d| - |wj|)).
      const double decrease = g * d + lambda * (std::abs(wj + d) - std::abs(wj));
      double a = 1;
      bool accepted = false;
      for (int half = 0; half < 50; ++half) {
        double change = lambda * (std::abs(wj + a * d) - std::abs(wj));
        for (int64_t k = k0; k < k1; ++k) {
          const size_t i = size_t(columns.index[size_t(k)]);
          const double step = a * d * columns.value[size_t(k)];
          change += (log1pexp(f.z[i] + step) - log1pexp(f.z[i]) - y[i] * step) / n;
        }
        if (change <= kSigma * a * decrease) {
          accepted = true;
          break;
        }
        a *= 0.5;
      }
      if (!accepted) continue;
      w[size_t(j)] = wj + a * d;
      for (int64_t k = k0; k < k1; ++k) {
        const size_t i = size_t(columns.index[size_t(k)]);
        f.z[i] += a * d * columns.value[size_t(k)];
        f.p[i] = sigmoid(f.z[i]);
      }
    }
  }
  return r;
}

SolverReport solve_linear_svm(const SparseLines& rows, std::span<const double> y01, double c,
                              SvmLoss loss, std::span<double> w, double& b, uint64_t seed,
                              const SolverOptions& options) {
  MG_CHECK(int64_t(w.size()) == rows.width && int64_t(y01.size()) == rows.lines && !y01.empty(),
           "linear-svm solver: ", w.size(), " weights and ", y01.size(), " labels for a ",
           rows.lines, " x ", rows.width, " matrix");
  MG_CHECK(c > 0, "linear-svm solver: C must be > 0, got ", c);
  const int64_t n = rows.lines;
  const bool squared = loss == SvmLoss::squared_hinge;
  const double diag = squared ? 0.5 / c : 0.0;  // D_ii of the dual's Q + D
  const double upper = squared ? INFINITY : c;
  std::vector<double> alpha(static_cast<size_t>(n), 0.0), qii(static_cast<size_t>(n), 0.0),
      y(static_cast<size_t>(n), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    y[size_t(i)] = y01[size_t(i)] > 0 ? 1.0 : -1.0;
    double sq = 1.0;  // the bias feature
    for (int64_t k = rows.start[size_t(i)]; k < rows.start[size_t(i) + 1]; ++k)
      sq += rows.value[size_t(k)] * rows.value[size_t(k)];
    qii[size_t(i)] = sq + diag;
  }
  std::fill(w.begin(), w.end(), 0.0);
  b = 0;
  auto margin = [&](int64_t i) {
    double s = b;
    for (int64_t k = rows.start[size_t(i)]; k < rows.start[size_t(i) + 1]; ++k)
      s += w[size_t(rows.index[size_t(k)])] * rows.value[size_t(k)];
    return s;
  };
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  Rng rng(seed, 0x5f3);
  SolverReport r;
  while (true) {
    // Duality gap at (w(a), a).
    double wsq = b * b, xi = 0, asum = 0, asq = 0;
    for (const double v : w) wsq += v * v;
    for (int64_t i = 0; i < n; ++i) {
      const double e = std::max(0.0, 1 - y[size_t(i)] * margin(i));
      xi += squared ? e * e : e;
      asum += alpha[size_t(i)];
      asq += alpha[size_t(i)] * alpha[size_t(i)];
    }
    r.primal = 0.5 * wsq + c * xi;
    r.dual = asum - 0.5 * wsq - 0.5 * diag * asq;
    if (r.primal - r.dual <= options.tolerance * r.primal) {
      r.converged = true;
      break;
    }
    if (r.sweeps >= options.max_sweeps) break;
    for (int64_t i = n - 1; i > 0; --i)
      std::swap(order[size_t(i)], order[rng.below(uint64_t(i + 1))]);
    for (const int64_t i : order) {
      const double ai = alpha[size_t(i)], yi = y[size_t(i)];
      const double g = yi * margin(i) - 1 + diag * ai;
      const double pg = ai == 0 ? std::min(g, 0.0) : ai == upper ? std::max(g, 0.0) : g;
      if (pg == 0) continue;
      const double next = std::min(std::max(ai - g / qii[size_t(i)], 0.0), upper);
      const double step = (next - ai) * yi;
      alpha[size_t(i)] = next;
      b += step;
      for (int64_t k = rows.start[size_t(i)]; k < rows.start[size_t(i) + 1]; ++k)
        w[size_t(rows.index[size_t(k)])] += step * rows.value[size_t(k)];
    }
    ++r.sweeps;
  }
  return r;
}

}  // namespace memgrad::text
