// The grounded GRU cell against its equations computed with loops; its semi-diagonal structure
// (label unit l reads g_{t-1} only through g_{l,t-1} and the control state); the GRNN paper's
// parameter-matched GRU sizes; and the text models' packing and sorting: a batch's predictions
// equal those of each note alone. The float64 gradient checks of grnn, bigrnn, text-gru and
// text-bigru run with every registered model (test_model_registry.cpp).
#include <doctest/doctest.h>

#include <cmath>

#include "models/model.hpp"
#include "models/text/grounded_gru.hpp"
#include "models/text/text_gru.hpp"
#include "models/text/text_inputs.hpp"
#include "ops/ops.hpp"
#include "tests/test_util.hpp"

using namespace memgrad;
using namespace memgrad::text;

namespace {

constexpr int64_t kIn = 2, kL = 4, kC = 3, kG = kL + kC;

void randomise(ParameterSet& params, uint64_t seed) {
  Rng rng(seed);
  for (const char* name : {"cell.W_x", "cell.W_c", "cell.W_cn", "cell.d", "cell.B", "cell.b"}) {
    Tensor& v = params.get(name).value;
    for (int64_t i = 0; i < v.numel(); ++i) v.set(i, rng.uniform(-0.8, 0.8));
  }
}

double sig(double x) { return 1 / (1 + std::exp(-x)); }

// One step of the cell with loops over the equations of grounded_gru.hpp: returns [g_t ; c_t].
std::vector<double> step_by_loops(ParameterSet& p, const std::vector<double>& x,
                                  const std::vector<double>& g, const std::vector<double>& c) {
  const Tensor &wx = p.get("cell.W_x").value, &wc = p.get("cell.W_c").value,
               &wcn = p.get("cell.W_cn").value, &d = p.get("cell.d").value,
               &bm = p.get("cell.B").value, &b = p.get("cell.b").value;
  std::vector<double> pre(3 * kG), r(kG), u(kG), h(kG);
  for (int64_t j = 0; j < 3 * kG; ++j) {
    pre[size_t(j)] = b.at(j);
    for (int64_t i = 0; i < kIn; ++i) pre[size_t(j)] += x[size_t(i)] * wx.at(i * 3 * kG + j);
  }
  for (int64_t gate = 0; gate < 2; ++gate)  // r, u
    for (int64_t j = 0; j < kG; ++j) {
      double v = pre[size_t(gate * kG + j)];
      for (int64_t k = 0; k < kC; ++k) v += c[size_t(k)] * wc.at(k * 2 * kG + gate * kG + j);
      if (j < kL) {
        v += d.at(gate * kL + j) * g[size_t(j)];  // diagonal
      } else {
        for (int64_t l = 0; l < kL; ++l) v += g[size_t(l)] * bm.at(l * 3 * kC + gate * kC + j - kL);
      }
      (gate == 0 ? r : u)[size_t(j)] = sig(v);
    }
  std::vector<double> gr(kL), cr(kC);
  for (int64_t l = 0; l < kL; ++l) gr[size_t(l)] = r[size_t(l)] * g[size_t(l)];
  for (int64_t k = 0; k < kC; ++k) cr[size_t(k)] = r[size_t(kL + k)] * c[size_t(k)];
  for (int64_t j = 0; j < kG; ++j) {
    double v = pre[size_t(2 * kG + j)];
    for (int64_t k = 0; k < kC; ++k) v += cr[size_t(k)] * wcn.at(k * kG + j);
    if (j < kL) {
      v += d.at(2 * kL + j) * gr[size_t(j)];
    } else {
      for (int64_t l = 0; l < kL; ++l) v += gr[size_t(l)] * bm.at(l * 3 * kC + 2 * kC + j - kL);
    }
    const double prev = j < kL ? g[size_t(j)] : c[size_t(j - kL)];
    h[size_t(j)] = u[size_t(j)] * prev + (1 - u[size_t(j)]) * std::tanh(v);
  }
  return h;
}

std::vector<double> step_by_cell(GroundedGruCell& cell, const std::vector<double>& x,
                                 const std::vector<double>& g, const std::vector<double>& c) {
  Tape tape;
  const Var xv = tape.input(Tensor::from(Shape{1, kIn}, DType::f64, x));
  GroundedState s{tape.input(Tensor::from(Shape{1, kL}, DType::f64, g)),
                  tape.input(Tensor::from(Shape{1, kC}, DType::f64, c))};
  s = cell.step_projected(tape, cell.project_inputs(xv), s);
  std::vector<double> h = s.g.value().to_vector();
  for (double v : s.c.value().to_vector()) h.push_back(v);
  return h;
}

}  // namespace

TEST_CASE("grounded GRU cell: shapes, initialisation, one step against the equations") {
  ParameterSet params(DType::f64);
  Rng rng(3);
  GroundedGruCell cell(params, "cell", kIn, kL, kC, rng);
  CHECK(params.get("cell.W_x").value.shape() == Shape{kIn, 3 * kG});
  CHECK(params.get("cell.B").value.shape() == Shape{kL, 3 * kC});
  const Tensor& b = params.get("cell.b").value;
  for (int64_t j = 0; j < 3 * kG; ++j) CHECK(b.at(j) == (j < 2 * kG ? 1.0 : 0.0));
  for (double v : params.get("cell.d").value.to_vector()) CHECK(v == 0);
  randomise(params, 5);
  const std::vector<double> x = {0.7, -1.2}, g = {0.3, -0.5, 0.9, 0.0}, c = {0.4, -0.2, 0.6};
  const std::vector<double> want = step_by_loops(params, x, g, c);
  const std::vector<double> got = step_by_cell(cell, x, g, c);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-12));
  Tape tape;
  CHECK_THROWS_AS(cell.step_projected(tape, tape.input(Tensor::zeros(Shape{1, 5}, DType::f64)),
                                      cell.zero_state(tape, 1, DType::f64)),
                  Error);
}

TEST_CASE("grounded GRU cell: label l reads g_{t-1} only through g_l and the control state") {
  ParameterSet params(DType::f64);
  Rng rng(4);
  GroundedGruCell cell(params, "cell", kIn, kL, kC, rng);
  randomise(params, 9);
  const std::vector<double> x = {0.7, -1.2}, g = {0.3, -0.5, 0.9, 0.0};
  // With c_{t-1} = 0 the reset control state is 0 whatever g is: moving g_k moves g_k alone
  // among the labels (exactly), and the control units (which read all of g through B).
  const std::vector<double> zero_c(kC, 0.0);
  const std::vector<double> base = step_by_cell(cell, x, g, zero_c);
  for (int64_t k = 0; k < kL; ++k) {
    std::vector<double> moved = g;
    moved[size_t(k)] += 0.25;
    const std::vector<double> h = step_by_cell(cell, x, moved, zero_c);
    for (int64_t l = 0; l < kL; ++l) {
      INFO("g_", k, " moved, label ", l);
      if (l == k)
        CHECK(h[size_t(l)] != base[size_t(l)]);
      else
        CHECK(h[size_t(l)] == base[size_t(l)]);
    }
    double control_change = 0;
    for (int64_t j = kL; j < kG; ++j) control_change += std::fabs(h[size_t(j)] - base[size_t(j)]);
    CHECK(control_change > 1e-6);
  }
  // With c_{t-1} != 0 the other labels see g_k only through the control units' reset gate r_c
  // (which reads g through B): zero B's reset block and the label block is diagonal again.
  const std::vector<double> c = {0.4, -0.2, 0.6};
  std::vector<double> moved = g;
  moved[0] += 0.25;
  CHECK(step_by_cell(cell, x, moved, c)[1] != step_by_cell(cell, x, g, c)[1]);
  Tensor& bm = params.get("cell.B").value;
  for (int64_t l = 0; l < kL; ++l)
    for (int64_t k = 0; k < kC; ++k) bm.set(l * 3 * kC + k, 0.0);  // B_R = 0
  const std::vector<double> a = step_by_cell(cell, x, moved, c), b = step_by_cell(cell, x, g, c);
  CHECK(a[0] != b[0]);
  for (int64_t l = 1; l < kL; ++l) CHECK(a[size_t(l)] == b[size_t(l)]);
}

TEST_CASE("parameter-matched GRU: the GRNN paper's 846 and 793, and ours") {
  CHECK(matched_gru_hidden(192, 128, 5000) == 846);
  CHECK(matched_gru_hidden(192, 128, 4000) == 793);
  const int64_t h = matched_gru_hidden(192, 128, 50);
  CHECK(gru_parameters(192, h, 50) <= grnn_parameters(192, 128, 50));
  CHECK(gru_parameters(192, h + 1, 50) > grnn_parameters(192, 128, 50));
  // The registered model's parameters are the ones counted.
  const auto grnn = create_model("grnn", {{"input_vocab", 10}, {"labels", 50}}, DType::f32, 1);
  CHECK(grnn->params().count() - 10 * 192 == grnn_parameters(192, 128, 50));
  const auto gru =
      create_model("text-gru", {{"input_vocab", 10}, {"labels", 50}, {"hidden", h}}, DType::f32, 1);
  CHECK(gru->params().count() - 10 * 192 == gru_parameters(192, h, 50));
}

TEST_CASE("text models: a batch's predictions are those of each note alone (packing, sorting)") {
  for (const char* name : {"grnn", "bigrnn", "text-gru", "text-bigru", "bow-attention"}) {
    INFO(name);
    const nlohmann::json cfg = {{"input_vocab", 9}, {"labels", 3}, {"embedding", 4}};
    auto model = create_model(name, cfg, DType::f64, 7);
    Batch batch;
    Rng rng(11);
    make_check_batch(rng, DType::f64, batch, 4, 5, 9, 3);
    ForwardOptions eval;
    eval.training = false;
    Tape tape;
    const std::vector<double> all =
        model->forward(tape, batch, eval).predictions.value().to_vector();
    REQUIRE(all.size() == 12);
    const Tensor& ids = batch.get("tokens");
    const Tensor& mask = batch.get("tokens_mask");
    for (int64_t b = 0; b < 4; ++b) {
      int64_t n = 0;
      while (n < 5 && mask.at(b * 5 + n) != 0) ++n;
      Batch one;
      Tensor& t = one.field("tokens", Shape{1, n}, DType::f64);
      Tensor& m = one.field("tokens_mask", Shape{1, n}, DType::f64);
      for (int64_t i = 0; i < n; ++i) t.set(i, ids.at(b * 5 + i)), m.set(i, 1.0);
      Tensor& y = one.field("labels", Shape{1, 3}, DType::f64);
      for (int64_t l = 0; l < 3; ++l) y.set(l, batch.get("labels").at(b * 3 + l));
      one.size = 1;
      Tape t1;
      const std::vector<double> alone =
          model->forward(t1, one, eval).predictions.value().to_vector();
      for (int64_t l = 0; l < 3; ++l)
        CHECK(all[size_t(b * 3 + l)] == doctest::Approx(alone[size_t(l)]).epsilon(1e-12));
    }
  }
}

TEST_CASE("bow-attention: the linear scorer has one score weight per window offset and no bias") {
  const nlohmann::json cfg = {{"input_vocab", 9}, {"labels", 3}, {"embedding", 4}, {"window", 1}};
  const auto linear = create_model("bow-attention", cfg, DType::f64, 1);
  CHECK(linear->params().get("attn.w.w").value.shape() == Shape{4, 3});
  CHECK(linear->params().find("attn.b") == nullptr);
  nlohmann::json tanh_cfg = cfg;
  tanh_cfg["scorer"] = "tanh";
  tanh_cfg["attention"] = 5;
  const auto tanh_model = create_model("bow-attention", tanh_cfg, DType::f64, 1);
  CHECK(tanh_model->params().get("attn.w.w").value.shape() == Shape{4, 15});
  CHECK(tanh_model->params().get("attn.v").value.shape() == Shape{5, 1});
  nlohmann::json bad = cfg;
  bad["scorer"] = "relu";
  CHECK_THROWS_WITH_AS(create_model("bow-attention", bad, DType::f64, 1),
                       doctest::Contains("scorer must be linear or tanh, got 'relu'"), Error);
}

TEST_CASE("text models: dropout on the word embeddings acts in training only") {
  for (const char* name : {"grnn", "bigrnn", "text-gru", "text-bigru", "bow-attention"}) {
    INFO(name);
    nlohmann::json cfg = {{"input_vocab", 9}, {"labels", 3}, {"embedding", 4}};
    Batch batch;
    Rng rng(11);
    make_check_batch(rng, DType::f64, batch, 4, 5, 9, 3);
    auto loss = [&](double p, bool training) {
      cfg["dropout"] = p;
      auto model = create_model(name, cfg, DType::f64, 7);
      ForwardOptions opts;
      opts.training = training;
      Tape tape;
      return model->forward(tape, batch, opts).loss.value().at(0);
    };
    CHECK(loss(0.5, false) == loss(0.0, false));  // evaluation: no dropout
    CHECK(loss(0.0, true) == loss(0.0, false));
    CHECK(loss(0.5, true) != loss(0.5, false));  // training: some embeddings dropped
    cfg["dropout"] = 1.0;
    CHECK_THROWS_WITH_AS(create_model(name, cfg, DType::f64, 1),
                         doctest::Contains("dropout must be in [0, 1), got 1"), Error);
  }
}
