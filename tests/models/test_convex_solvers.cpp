// The exact solvers of l1-logreg and linear-svm (models/text/convex_solvers.hpp) against solutions
// known from their optimality conditions, the tf-idf features against their formula, and the two
// models' forward against the solvers' margins. The float64 gradient checks of both models' smooth
// data terms run with every registered model (test_model_registry.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "models/model.hpp"
#include "models/solved_model.hpp"
#include "models/text/convex_solvers.hpp"
#include "models/text/text_inputs.hpp"
#include "models/text/tfidf.hpp"

using namespace memgrad;
using namespace memgrad::text;

namespace {

// A random sparse n x v matrix (about half the entries set, every row and column non-empty) by
// rows, and labels that depend on the first two columns.
SparseLines random_rows(int64_t n, int64_t v, uint64_t seed, std::vector<double>& y) {
  Rng rng(seed);
  SparseLines rows;
  rows.width = v;
  y.clear();
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int32_t> idx;
    std::vector<double> val;
    for (int64_t j = 0; j < v; ++j)
      if (j == i % v || rng.uniform() < 0.5) {
        idx.push_back(int32_t(j));
        val.push_back(rng.uniform(0.1, 1.0));
      }
    double score = rng.uniform(-0.6, 0.6);
    for (size_t k = 0; k < idx.size(); ++k)
      if (idx[k] < 2) score += (idx[k] == 0 ? 1.0 : -1.0) * val[k];
    y.push_back(score > 0 ? 1.0 : 0.0);
    rows.add_line(idx, val);
  }
  return rows;
}

double sigmoid(double z) { return 1 / (1 + std::exp(-z)); }

// X^T (y - p) / n per column at (w, b), and sum_i (y_i - p_i) / n.
std::vector<double> residual_correlations(const SparseLines& rows, const std::vector<double>& y,
                                          const std::vector<double>& w, double b,
                                          double* mean_residual) {
  std::vector<double> g(size_t(rows.width), 0.0);
  double s = 0;
  const double n = double(rows.lines);
  for (int64_t i = 0; i < rows.lines; ++i) {
    double z = b;
    for (int64_t k = rows.start[size_t(i)]; k < rows.start[size_t(i) + 1]; ++k)
      z += w[size_t(rows.index[size_t(k)])] * rows.value[size_t(k)];
    const double r = y[size_t(i)] - sigmoid(z);
    s += r;
    for (int64_t k = rows.start[size_t(i)]; k < rows.start[size_t(i) + 1]; ++k)
      g[size_t(rows.index[size_t(k)])] += rows.value[size_t(k)] * r / n;
  }
  *mean_residual = s / n;
  return g;
}

}  // namespace

TEST_CASE("l1-logreg solver: the KKT conditions hold at its solution") {
  std::vector<double> y;
  const SparseLines rows = random_rows(40, 6, 3, y);
  const SparseLines cols = rows.transposed();
  const double lambda_max = l1_logreg_lambda_max(cols, y);
  REQUIRE(lambda_max > 0);
  for (const double fraction : {0.5, 0.1, 0.01}) {
    CAPTURE(fraction);
    const double lambda = fraction * lambda_max;
    std::vector<double> w(6, 0.0);
    double b = 0;
    const SolverReport r =
        solve_l1_logreg(cols, y, lambda, w, b, {.tolerance = 1e-13, .max_sweeps = 100000});
    REQUIRE(r.converged);
    CHECK(r.primal - r.dual <= 1e-13 * r.primal);
    CHECK(r.dual <= r.primal * (1 + 1e-12));  // (equal up to rounding at the optimum)
    double mean_residual = 0;
    const std::vector<double> g = residual_correlations(rows, y, w, b, &mean_residual);
    CHECK(std::abs(mean_residual) < 1e-10);  // the free intercept
    int nonzero = 0;
    for (size_t j = 0; j < w.size(); ++j) {
      CAPTURE(j);
      if (w[j] != 0) {
        ++nonzero;
        CHECK(g[j] == doctest::Approx(lambda * (w[j] > 0 ? 1 : -1)).epsilon(1e-5));
      } else {
        CHECK(std::abs(g[j]) <= lambda * (1 + 1e-6));
      }
    }
    CHECK(nonzero >= 1);
    if (fraction == 0.5) CHECK(nonzero < 6);  // a strong penalty leaves some weights at zero
  }
}

TEST_CASE("l1-logreg solver: at lambda_max the weights are zero and b is the log-odds") {
  std::vector<double> y;
  const SparseLines cols = random_rows(30, 5, 7, y).transposed();
  const double lambda_max = l1_logreg_lambda_max(cols, y);
  std::vector<double> w(5, 0.3);  // a start away from the solution
  double b = -2;
  const SolverReport r =
      solve_l1_logreg(cols, y, lambda_max * 1.0001, w, b, {.tolerance = 1e-14, .max_sweeps = 1000});
  REQUIRE(r.converged);
  for (const double v : w) CHECK(v == 0);
  const double mean = std::accumulate(y.begin(), y.end(), 0.0) / double(y.size());
  CHECK(b == doctest::Approx(std::log(mean / (1 - mean))).epsilon(1e-9));
  // Just below lambda_max a weight comes in.
  solve_l1_logreg(cols, y, lambda_max * 0.9, w, b, {});
  CHECK(std::any_of(w.begin(), w.end(), [](double v) { return v != 0; }));
}

TEST_CASE("l1-logreg solver: warm and cold starts reach the same objective; one class only") {
  std::vector<double> y;
  const SparseLines cols = random_rows(50, 8, 11, y).transposed();
  const double lambda = 0.05 * l1_logreg_lambda_max(cols, y);
  std::vector<double> cold(8, 0.0), warm(8, 0.0);
  double b_cold = 0, b_warm = 0;
  solve_l1_logreg(cols, y, 0.2 * l1_logreg_lambda_max(cols, y), warm, b_warm, {});
  const SolverReport a = solve_l1_logreg(cols, y, lambda, cold, b_cold, {.tolerance = 1e-12});
  const SolverReport c = solve_l1_logreg(cols, y, lambda, warm, b_warm, {.tolerance = 1e-12});
  CHECK(a.primal == doctest::Approx(c.primal).epsilon(1e-10));
  for (size_t j = 0; j < cold.size(); ++j) CHECK(cold[j] == doctest::Approx(warm[j]).epsilon(1e-4));
  // A label never positive: no optimum; w = 0 and a very negative intercept.
  std::vector<double> none(y.size(), 0.0);
  double b = 0;
  const SolverReport r = solve_l1_logreg(cols, none, lambda, cold, b, {});
  CHECK(r.converged);
  for (const double v : cold) CHECK(v == 0);
  CHECK(b == doctest::Approx(-std::log(4.0 * double(y.size()))));
}

TEST_CASE("linear-svm solver: the maximum-margin solution of two points") {
  // x = +1 (y = +1) and x = -1 (y = -1) with the bias feature: min |(w, b)|^2 / 2 subject to
  // w + b >= 1 and w - b >= 1 gives w = 1, b = 0 (dual a = 1/2 each), reached for C >= 1/2.
  SparseLines rows;
  rows.width = 1;
  rows.add_line(std::vector<int32_t>{0}, std::vector<double>{1.0});
  rows.add_line(std::vector<int32_t>{0}, std::vector<double>{-1.0});
  const std::vector<double> y = {1, 0};
  std::vector<double> w(1);
  double b = 0;
  const SolverReport r = solve_linear_svm(rows, y, 10.0, SvmLoss::hinge, w, b, 1, {1e-12, 100000});
  REQUIRE(r.converged);
  CHECK(w[0] == doctest::Approx(1.0).epsilon(1e-9));
  CHECK(std::abs(b) < 1e-9);
  CHECK(r.primal == doctest::Approx(0.5).epsilon(1e-9));
}

TEST_CASE("linear-svm solver: the primal gradient vanishes at the squared-hinge solution") {
  std::vector<double> y;
  const SparseLines rows = random_rows(40, 6, 5, y);
  for (const double c : {0.1, 1.0, 10.0}) {
    CAPTURE(c);
    std::vector<double> w(6);
    double b = 0;
    const SolverReport r =
        solve_linear_svm(rows, y, c, SvmLoss::squared_hinge, w, b, 2, {1e-13, 1000000});
    REQUIRE(r.converged);
    // d/d(w, b) of 1/2 |(w, b)|^2 + C sum max(0, 1 - s_i m_i)^2 = (w, b) - 2C sum xi_i s_i x_i.
    std::vector<double> grad(w.begin(), w.end());
    double grad_b = b;
    for (int64_t i = 0; i < rows.lines; ++i) {
      const double s = y[size_t(i)] > 0 ? 1 : -1;
      double m = b;
      for (int64_t k = rows.start[size_t(i)]; k < rows.start[size_t(i) + 1]; ++k)
        m += w[size_t(rows.index[size_t(k)])] * rows.value[size_t(k)];
      const double xi = std::max(0.0, 1 - s * m);
      for (int64_t k = rows.start[size_t(i)]; k < rows.start[size_t(i) + 1]; ++k)
        grad[size_t(rows.index[size_t(k)])] -= 2 * c * xi * s * rows.value[size_t(k)];
      grad_b -= 2 * c * xi * s;
    }
    for (const double g : grad) CHECK(std::abs(g) < 1e-5);
    CHECK(std::abs(grad_b) < 1e-5);
  }
}

namespace {

// Two notes: word ids per row (0 = padding) and labels, as the codiesp task's batch.
void fill_notes(Batch& batch, const std::vector<std::vector<int>>& notes,
                const std::vector<std::vector<int>>& labels) {
  const int64_t B = int64_t(notes.size()), L = int64_t(labels[0].size());
  int64_t T = 0;
  for (const auto& n : notes) T = std::max<int64_t>(T, int64_t(n.size()));
  Tensor& ids = batch.field("tokens", Shape{B, T}, DType::f64);
  Tensor& mask = batch.field("tokens_mask", Shape{B, T}, DType::f64);
  Tensor& y = batch.field("labels", Shape{B, L}, DType::f64);
  ids.zero();
  mask.zero();
  for (int64_t b = 0; b < B; ++b) {
    for (size_t t = 0; t < notes[size_t(b)].size(); ++t) {
      ids.set(b * T + int64_t(t), notes[size_t(b)][t]);
      mask.set(b * T + int64_t(t), 1);
    }
    for (int64_t l = 0; l < L; ++l) y.set(b * L + l, labels[size_t(b)][size_t(l)]);
  }
  batch.size = B;
}

}  // namespace

TEST_CASE("tf-idf: the formula, unit rows, and the same data from batches in any order") {
  Batch one, two;
  fill_notes(one, {{2, 3, 2}, {3, 4}}, {{1, 0}, {0, 1}});
  fill_notes(two, {{4, 1}}, {{1, 1}});
  NoteCollector a(5, 2), b(5, 2);
  a.add(one, "test");
  a.add(two, "test");
  b.add(two, "test");
  b.add(one, "test");
  const TfIdfData da = a.build(), db = b.build();
  CHECK(da.rows.index == db.rows.index);
  CHECK(da.rows.value == db.rows.value);
  CHECK(da.y == db.y);
  REQUIRE(da.notes == 3);
  // df: word 1 in 1 note, 2 in 1, 3 in 2, 4 in 2.
  const double idf1 = std::log(4.0 / 2.0) + 1, idf3 = std::log(4.0 / 3.0) + 1;
  CHECK(da.idf[1] == doctest::Approx(idf1));
  CHECK(da.idf[3] == doctest::Approx(idf3));
  // The note {2, 3, 2}: tf(2) = 1 + log 2, tf(3) = 1, then unit length.
  for (int64_t i = 0; i < da.notes; ++i) {
    double sq = 0;
    for (int64_t k = da.rows.start[size_t(i)]; k < da.rows.start[size_t(i) + 1]; ++k)
      sq += da.rows.value[size_t(k)] * da.rows.value[size_t(k)];
    CHECK(sq == doctest::Approx(1.0).epsilon(1e-10));
  }
  const double x2 = (1 + std::log(2.0)) * idf1, x3 = idf3;  // (idf of word 2 equals word 1's)
  bool found = false;
  for (int64_t i = 0; i < da.notes; ++i)
    if (da.rows.start[size_t(i) + 1] - da.rows.start[size_t(i)] == 2 &&
        da.rows.index[size_t(da.rows.start[size_t(i)])] == 2) {
      found = true;
      CHECK(da.rows.value[size_t(da.rows.start[size_t(i)])] ==
            doctest::Approx(x2 / std::sqrt(x2 * x2 + x3 * x3)));
    }
  CHECK(found);
  // Padding inside a note's words is refused.
  Batch bad;
  fill_notes(bad, {{2, 0, 3}}, {{1, 0}});
  NoteCollector c(5, 2);
  CHECK_THROWS_WITH_AS(c.add(bad, "l1-logreg"), doctest::Contains("word id 0"), Error);
}

TEST_CASE("l1-logreg and linear-svm: forward's logits are the solution's margins") {
  Rng rng(4);
  Batch batch;
  make_check_batch(rng, DType::f64, batch, 12, 6, 9, 3);
  for (const char* name : {"l1-logreg", "linear-svm"}) {
    CAPTURE(name);
    auto model = create_model(name, {{"input_vocab", 9}, {"labels", 3}, {"select", "global"}},
                              DType::f64, 1);
    auto* solved = dynamic_cast<SolvedModel*>(model.get());
    REQUIRE(solved);
    CHECK(solved->needs_data());
    solved->observe(batch, true);
    CHECK_FALSE(solved->needs_data());
    const std::string note = model->on_epoch_end(3, 0.0);
    CHECK(note.find("NOT converged") == std::string::npos);
    // The solver's margins, from the same notes the collector built.
    NoteCollector notes(9, 3);
    notes.add(batch, name);
    const TfIdfData d = notes.build();
    Tape tape(1);
    // The note order of the batch differs from the canonical order: compare as multisets of
    // (row's margins) by matching each batch row's features.
    const Tensor logits = model->forward(tape, batch, {}).predictions.value();
    const Tensor& w = model->params().get("W").value;
    const Tensor& b = model->params().get("b").value;
    std::vector<std::vector<double>> want, got;
    for (int64_t i = 0; i < d.notes; ++i) {
      std::vector<double> m(3);
      for (int64_t l = 0; l < 3; ++l) {
        m[size_t(l)] = b.at(l);
        for (int64_t k = d.rows.start[size_t(i)]; k < d.rows.start[size_t(i) + 1]; ++k)
          m[size_t(l)] += w.at(d.rows.index[size_t(k)] * 3 + l) * d.rows.value[size_t(k)];
      }
      want.push_back(m);
    }
    for (int64_t i = 0; i < 12; ++i)
      got.push_back({logits.at(i * 3), logits.at(i * 3 + 1), logits.at(i * 3 + 2)});
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    for (size_t i = 0; i < want.size(); ++i)
      for (size_t l = 0; l < 3; ++l) CHECK(got[i][l] == doctest::Approx(want[i][l]).epsilon(1e-9));
  }
}

TEST_CASE("l1-logreg per label: each label keeps the path point of least dev loss") {
  Rng rng(6);
  Batch train, dev;
  make_check_batch(rng, DType::f64, train, 12, 6, 9, 3);
  make_check_batch(rng, DType::f64, dev, 8, 6, 9, 3);
  auto model = create_model("l1-logreg", {{"input_vocab", 9}, {"labels", 3}}, DType::f64, 1);
  CHECK(model->config().at("select") == "per_label");  // the paper's choice is the default
  auto* solved = dynamic_cast<SolvedModel*>(model.get());
  REQUIRE(solved);
  solved->observe(train, true);
  CHECK_THROWS_WITH_AS(model->on_epoch_end(1, 0.0), doctest::Contains("validation notes"), Error);
  solved->observe_validation(dev, true);
  CHECK(model->on_epoch_end(1, 0.0).find(", 3 labels keep it") != std::string::npos);
  // Later points: a label whose dev loss does not fall keeps its parameters and its point.
  for (int64_t e = 2; e <= 12; ++e) {
    const Tensor before = model->params().get("W").value.clone();
    const nlohmann::json state_before = model->training_state();
    model->on_epoch_end(e, 0.0);
    const nlohmann::json state = model->training_state();
    for (int64_t l = 0; l < 3; ++l) {
      const double was = state_before["best_dev_loss"][l], now = state["best_dev_loss"][l];
      CHECK(now <= was);
      if (now == was) {
        CHECK(state["kept_point"][l] == state_before["kept_point"][l]);
        for (int64_t v = 0; v < 9; ++v)
          CHECK(model->params().get("W").value.at(v * 3 + l) == before.at(v * 3 + l));
      } else {
        CHECK(state["kept_point"][l] == e);
      }
    }
  }
  // Here the dev loss stops falling before the path's end for some label (overfitting).
  const auto kept = model->training_state()["kept_point"].get<std::vector<int64_t>>();
  CHECK(*std::min_element(kept.begin(), kept.end()) < 12);
}
