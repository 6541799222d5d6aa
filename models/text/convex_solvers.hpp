// Exact solvers of the convex baselines of task codiesp, one label at a time, on sparse features
// (tfidf.hpp). Both stop on the duality gap, which bounds the distance of the objective from its
// optimum: relative gap (P - D) / P <= tolerance.
//
// L1-regularised logistic regression (labels y in {0, 1}, intercept b not penalised):
//     P(w, b) = (1/n) sum_i [log(1 + e^{z_i}) - y_i z_i] + lambda |w|_1,   z = X w + b
// by cyclic coordinate descent with a one-dimensional Newton step and Armijo line search per
// weight (CDN: Yuan, Chang, Hsieh & Lin 2010, "A comparison of optimization methods and software
// for large-scale L1-regularized linear classification", section 4.1.2; the intercept by exact
// Newton steps). Dual (Koh, Kim & Boyd 2007, section 2.2, in our notation):
//     D(a) = -(1/n) sum_i [q_i log q_i + (1 - q_i) log(1 - q_i)],  q_i = y_i - a_i in [0, 1],
//     subject to sum_i a_i = 0 and |X^T a|_inf <= n lambda.
// The dual point of a primal iterate: the intercept is first made optimal for w (Newton to
// |sum_i (y_i - p_i)| / n < 1e-13), then a = s (y - p), s = min(1, n lambda / |X^T (y - p)|_inf).
//
// L2-regularised linear SVM (labels y in {-1, +1}), LIBLINEAR's primal with the bias as a weight
// of a constant feature 1 (regularised, as LIBLINEAR -B 1):
//     P(w) = 1/2 |w|^2 + C sum_i xi_i,  xi_i = max(0, 1 - y_i w.x_i)  (hinge)  or its square
// by dual coordinate descent (Hsieh, Chang, Lin, Keerthi & Sundararajan 2008, Algorithm 1, without
// shrinking; examples in a seeded random order each sweep):
//     D(a) = sum_i a_i - 1/2 |w(a)|^2 - sum_i a_i^2 / (4C) [squared hinge],  w(a) = sum a_i y_i
//     x_i, 0 <= a_i <= C (hinge) or 0 <= a_i (squared hinge).
#pragma once
#include <cstdint>
#include <span>

#include "models/text/tfidf.hpp"

namespace memgrad::text {

struct SolverOptions {
  double tolerance = 1e-6;  // on the relative duality gap
  int64_t max_sweeps = 100000;
};

struct SolverReport {
  int64_t sweeps = 0;
  double primal = 0, dual = 0;  // objective values at the end
  bool converged = false;       // relative gap <= tolerance
  double relative_gap() const { return primal > 0 ? (primal - dual) / primal : 0.0; }
};

// lambda_max = |X^T (y - mean(y))|_inf / n: the smallest lambda whose solution has w = 0.
double l1_logreg_lambda_max(const SparseLines& columns, std::span<const double> y);

// Solves from the starting point (w, b) in place. `columns` is X by columns (n rows). A label
// without a positive or without a negative has no optimum: w = 0 and b = -/+ log(4n) (a
// probability below 1 / (4n) of the missing class), reported converged with zero gap.
SolverReport solve_l1_logreg(const SparseLines& columns, std::span<const double> y, double lambda,
                             std::span<double> w, double& b, const SolverOptions& options);

// The duality gap's two sides at (w, b) after making b optimal (b is changed): for tests.
SolverReport l1_logreg_gap(const SparseLines& columns, std::span<const double> y, double lambda,
                           std::span<const double> w, double& b);

enum class SvmLoss { hinge, squared_hinge };

// Solves from a = 0; `rows` is X by rows, y in {0, 1} (mapped to -1, +1). Writes w (width of X)
// and the bias weight b. `seed` orders the examples of each sweep.
SolverReport solve_linear_svm(const SparseLines& rows, std::span<const double> y, double c,
                              SvmLoss loss, std::span<double> w, double& b, uint64_t seed,
                              const SolverOptions& options);

}  // namespace memgrad::text
