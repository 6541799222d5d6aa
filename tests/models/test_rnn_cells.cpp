// LSTM and GRU cells (models/layers/rnn_cells.*): forward values against the equations computed
// with plain loops, shapes and parameter layout, the projected-input and split-input paths (and
// layers::TokenLstm, which folds an embedding into the split input), and float64 gradient checks of
// parameters and inputs over three steps.
#include <doctest/doctest.h>

#include <cmath>
#include <optional>
#include <vector>

#include "engine/alloc_counter.hpp"
#include "engine/error.hpp"
#include "engine/gradcheck.hpp"
#include "models/layers/linear.hpp"
#include "models/layers/lstm_runner.hpp"
#include "models/layers/rnn_cells.hpp"
#include "models/model.hpp"
#include "ops/ops.hpp"

using namespace memgrad;

namespace {

double sigm(double z) { return 1 / (1 + std::exp(-z)); }

// Sets every element of a parameter from a formula of its flat index (deterministic, varied).
void fill_param(Parameter& p, double scale, double phase) {
  for (int64_t i = 0; i < p.value.numel(); ++i)
    p.value.set(i, scale * std::sin(0.7 * double(i) + phase));
}

// out[b, j] = sum_k x[b, k] w[k, j] with plain loops, row-major vectors.
std::vector<double> matvec(const std::vector<double>& x, int64_t batch, int64_t in, const Tensor& w,
                           int64_t out) {
  std::vector<double> y(size_t(batch * out), 0.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t j = 0; j < out; ++j)
      for (int64_t k = 0; k < in; ++k)
        y[size_t(b * out + j)] += x[size_t(b * in + k)] * w.at(k * out + j);
  return y;
}

void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i] == doctest::Approx(want[i]).epsilon(tol).scale(1.0));
  }
}

// loss = sum over the steps' outputs of sum(out * fixed weights): every element counts.
Var project(Var out, int salt) {
  Tensor r = Tensor::empty(out.shape(), out.dtype());
  for (int64_t i = 0; i < r.numel(); ++i) r.set(i, std::cos(1.3 * double(i) + salt));
  return sum(mul(out, out.tape->input(r)));
}

Tensor sequence(int64_t batch, int64_t steps, int64_t in, double phase) {
  Tensor t = Tensor::empty(Shape{batch, steps, in}, DType::f64);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, std::sin(1.1 * double(i) + phase));
  return t;
}

}  // namespace

TEST_CASE("LstmCell: parameters, shapes and the forget-gate bias") {
  ParameterSet params(DType::f32);
  Rng rng(1);
  LstmCell cell(params, "enc1.lstm", 3, 5, rng);
  CHECK(cell.input_size() == 3);
  CHECK(cell.hidden() == 5);
  REQUIRE(params.size() == 3);
  CHECK(params.get("enc1.lstm.W_x").value.shape() == Shape{3, 20});
  CHECK(params.get("enc1.lstm.W_h").value.shape() == Shape{5, 20});
  const Tensor& b = params.get("enc1.lstm.b").value;
  CHECK(b.shape() == Shape{20});
  for (int64_t j = 0; j < 20; ++j) CHECK(b.at(j) == (j >= 5 && j < 10 ? 1.0 : 0.0));
  const double limit = std::sqrt(6.0 / (3 + 5 + 20));
  for (double w : params.get("enc1.lstm.W_h").value.to_vector()) CHECK(std::fabs(w) <= limit);

  Tape tape;
  LstmState s = cell.zero_state(tape, 2, DType::f32);
  CHECK(s.h.shape() == Shape{2, 5});
  CHECK(s.c.shape() == Shape{2, 5});
  Var x = tape.input(Tensor::full(Shape{2, 3}, DType::f32, 0.5));
  s = cell.step(tape, x, s);
  CHECK(s.h.shape() == Shape{2, 5});
  CHECK(s.c.shape() == Shape{2, 5});
  Var xs = tape.input(Tensor::full(Shape{2, 4, 3}, DType::f32, 0.5));
  CHECK(cell.project_inputs(xs).shape() == Shape{2, 4, 20});
  CHECK_THROWS_AS(cell.step(tape, xs, s), Error);
  CHECK_THROWS_AS(cell.step(tape, tape.input(Tensor::zeros(Shape{2, 4}, DType::f32)), s), Error);
  CHECK_THROWS_AS(cell.step_projected(tape, x, s), Error);
}

TEST_CASE("LstmCell: two steps against the equations computed with loops") {
  const int64_t B = 2, I = 3, H = 2, G = 4 * H;
  for (DType dtype : {DType::f64, DType::f32}) {
    INFO("dtype ", dtype_name(dtype));
    ParameterSet params(dtype);
    Rng rng(2);
    LstmCell cell(params, "lstm", I, H, rng);
    fill_param(params.get("lstm.W_x"), 0.6, 0.1);
    fill_param(params.get("lstm.W_h"), 0.5, 0.9);
    fill_param(params.get("lstm.b"), 0.3, 2.0);
    const Tensor &wx = params.get("lstm.W_x").value, &wh = params.get("lstm.W_h").value,
                 &bias = params.get("lstm.b").value;

    const std::vector<double> x1 = {0.5, -1.0, 2.0, 0.1, 0.3, -0.7};
    const std::vector<double> x2 = {-0.4, 0.8, 0.2, 1.5, -0.6, 0.9};
    const std::vector<double> h0 = {0.2, -0.3, 0.05, 0.4};
    const std::vector<double> c0 = {-0.5, 0.25, 1.0, -0.1};

    // Reference: gates = x Wx + h Wh + b in blocks i f g o.
    std::vector<double> h = h0, c = c0;
    std::vector<std::vector<double>> want_h, want_c;
    for (const std::vector<double>* x : {&x1, &x2}) {
      const std::vector<double> a = matvec(*x, B, I, wx, G), r = matvec(h, B, H, wh, G);
      std::vector<double> hn(size_t(B * H)), cn(size_t(B * H));
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < H; ++j) {
          auto gate = [&](int64_t blk) {
            const size_t k = size_t(b * G + blk * H + j);
            return a[k] + r[k] + bias.at(blk * H + j);
          };
          const size_t e = size_t(b * H + j);
          cn[e] = sigm(gate(1)) * c[e] + sigm(gate(0)) * std::tanh(gate(2));
          hn[e] = sigm(gate(3)) * std::tanh(cn[e]);
        }
      h = hn;
      c = cn;
      want_h.push_back(h);
      want_c.push_back(c);
    }

    const double tol = dtype == DType::f64 ? 1e-13 : 1e-5;
    Tape tape;
    LstmState s{tape.input(Tensor::from(Shape{B, H}, dtype, h0)),
                tape.input(Tensor::from(Shape{B, H}, dtype, c0))};
    const LstmState s0 = s;
    s = cell.step(tape, tape.input(Tensor::from(Shape{B, I}, dtype, x1)), s);
    check_close(s.h.value().to_vector(), want_h[0], tol);
    check_close(s.c.value().to_vector(), want_c[0], tol);
    s = cell.step(tape, tape.input(Tensor::from(Shape{B, I}, dtype, x2)), s);
    check_close(s.h.value().to_vector(), want_h[1], tol);
    check_close(s.c.value().to_vector(), want_c[1], tol);

    // The projected path: one GEMM for both steps' inputs, same values.
    std::vector<double> xs(size_t(B * 2 * I));  // [B, T=2, I]
    for (int64_t b = 0; b < B; ++b)
      for (int64_t k = 0; k < I; ++k) {
        xs[size_t((b * 2 + 0) * I + k)] = x1[size_t(b * I + k)];
        xs[size_t((b * 2 + 1) * I + k)] = x2[size_t(b * I + k)];
      }
    Var xw = cell.project_inputs(tape.input(Tensor::from(Shape{B, 2, I}, dtype, xs)));
    REQUIRE(xw.shape() == Shape{B, 2, G});
    LstmState p = s0;
    for (int64_t t = 0; t < 2; ++t)
      p = cell.step_projected(tape, reshape(slice(xw, 1, t, 1), Shape{B, G}), p);
    check_close(p.h.value().to_vector(), want_h[1], tol);
    check_close(p.c.value().to_vector(), want_c[1], tol);
  }
}

TEST_CASE("GruCell: the r and z biases start at gate_bias, the candidate's at 0") {
  ParameterSet params(DType::f64);
  Rng rng(3);
  const int64_t H = 3;
  GruCell plain(params, "plain", 2, H, rng);
  GruCell keeping(params, "keeping", 2, H, rng, 1.0);
  const Tensor &b0 = params.get("plain.b").value, &b1 = params.get("keeping.b").value;
  for (int64_t j = 0; j < 3 * H; ++j) {
    CHECK(b0.at(j) == 0.0);
    CHECK(b1.at(j) == (j < 2 * H ? 1.0 : 0.0));
  }
  // The text baselines take TensorFlow's GRUCell start (the reference code's cell); a flag
  // overrides it.
  const auto gru =
      create_model("text-gru", {{"input_vocab", 5}, {"labels", 2}, {"hidden", 2}}, DType::f64, 1);
  CHECK(gru->params().get("gru.b").value.to_vector() ==
        std::vector<double>{1.0, 1.0, 1.0, 1.0, 0.0, 0.0});
  const auto flat = create_model(
      "text-bigru", {{"input_vocab", 5}, {"labels", 2}, {"hidden", 1}, {"gate_bias", 0.0}},
      DType::f64, 1);
  CHECK(flat->params().get("reverse.b").value.to_vector() == std::vector<double>{0.0, 0.0, 0.0});
  const auto bigrnn = create_model(
      "bigrnn", {{"input_vocab", 5}, {"labels", 2}, {"control", 2}, {"reverse_hidden", 1}},
      DType::f64, 1);
  CHECK(bigrnn->params().get("reverse.b").value.to_vector() == std::vector<double>{1.0, 1.0, 0.0});
}

TEST_CASE("GruCell: two steps against Cho et al.'s equations computed with loops") {
  const int64_t B = 2, I = 3, H = 2;
  for (DType dtype : {DType::f64, DType::f32}) {
    INFO("dtype ", dtype_name(dtype));
    ParameterSet params(dtype);
    Rng rng(3);
    GruCell cell(params, "gru", I, H, rng);
    REQUIRE(params.size() == 4);
    CHECK(params.get("gru.W_x").value.shape() == Shape{I, 3 * H});
    CHECK(params.get("gru.U_rz").value.shape() == Shape{H, 2 * H});
    CHECK(params.get("gru.U_n").value.shape() == Shape{H, H});
    CHECK(params.get("gru.b").value.shape() == Shape{3 * H});
    fill_param(params.get("gru.W_x"), 0.7, 0.3);
    fill_param(params.get("gru.U_rz"), 0.6, 1.1);
    fill_param(params.get("gru.U_n"), 0.8, 2.3);
    fill_param(params.get("gru.b"), 0.2, 0.5);
    const Tensor &wx = params.get("gru.W_x").value, &urz = params.get("gru.U_rz").value,
                 &un = params.get("gru.U_n").value, &bias = params.get("gru.b").value;

    const std::vector<std::vector<double>> xs = {{0.5, -1.0, 2.0, 0.1, 0.3, -0.7},
                                                 {-0.4, 0.8, 0.2, 1.5, -0.6, 0.9}};
    const std::vector<double> h0 = {0.2, -0.3, 0.05, 0.4};
    std::vector<double> h = h0;
    std::vector<std::vector<double>> want;
    for (const auto& x : xs) {
      const std::vector<double> a = matvec(x, B, I, wx, 3 * H), u = matvec(h, B, H, urz, 2 * H);
      std::vector<double> r(size_t(B * H)), z(size_t(B * H)), rh(size_t(B * H));
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < H; ++j) {
          const size_t e = size_t(b * H + j);
          r[e] = sigm(a[size_t(b * 3 * H + j)] + u[size_t(b * 2 * H + j)] + bias.at(j));
          z[e] = sigm(a[size_t(b * 3 * H + H + j)] + u[size_t(b * 2 * H + H + j)] + bias.at(H + j));
          rh[e] = r[e] * h[e];
        }
      const std::vector<double> un_rh = matvec(rh, B, H, un, H);
      std::vector<double> hn(size_t(B * H));
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < H; ++j) {
          const size_t e = size_t(b * H + j);
          const double n =
              std::tanh(a[size_t(b * 3 * H + 2 * H + j)] + un_rh[e] + bias.at(2 * H + j));
          hn[e] = z[e] * h[e] + (1 - z[e]) * n;
        }
      h = hn;
      want.push_back(h);
    }

    const double tol = dtype == DType::f64 ? 1e-13 : 1e-5;
    Tape tape;
    Var hv = tape.input(Tensor::from(Shape{B, H}, dtype, h0));
    const Var h_init = hv;
    for (size_t t = 0; t < xs.size(); ++t) {
      hv = cell.step(tape, tape.input(Tensor::from(Shape{B, I}, dtype, xs[t])), hv);
      check_close(hv.value().to_vector(), want[t], tol);
    }
    // Projected path, inputs laid out [T, B, I] this time (any leading dims fold).
    std::vector<double> flat;
    for (const auto& x : xs) flat.insert(flat.end(), x.begin(), x.end());
    Var xw = cell.project_inputs(tape.input(Tensor::from(Shape{2, B, I}, dtype, flat)));
    REQUIRE(xw.shape() == Shape{2, B, 3 * H});
    Var hp = h_init;
    for (int64_t t = 0; t < 2; ++t)
      hp = cell.step_projected(tape, reshape(slice(xw, 0, t, 1), Shape{B, 3 * H}), hp);
    check_close(hp.value().to_vector(), want[1], tol);
    CHECK(cell.zero_state(tape, 4, dtype).shape() == Shape{4, H});
  }
}

TEST_CASE("StackedLstm: layers, names and state updated in place") {
  ParameterSet params(DType::f64);
  Rng rng(4);
  StackedLstm net(params, "ctrl", 3, 4, 3, rng);
  CHECK(net.layers() == 3);
  CHECK(net.input_size() == 3);
  CHECK(net.hidden() == 4);
  CHECK(params.size() == 9);
  CHECK(params.get("ctrl.l0.W_x").value.shape() == Shape{3, 16});
  CHECK(params.get("ctrl.l1.W_x").value.shape() == Shape{4, 16});
  CHECK(params.get("ctrl.l2.W_h").value.shape() == Shape{4, 16});

  Tape tape;
  std::vector<LstmState> state = net.zero_state(tape, 2, DType::f64);
  REQUIRE(state.size() == 3);
  Var x = tape.input(Tensor::full(Shape{2, 3}, DType::f64, 0.3));
  Var top = net.step(tape, x, state);
  CHECK(top.id == state[2].h.id);
  // Layer by layer by hand: the same nodes' values.
  std::vector<LstmState> ref = net.zero_state(tape, 2, DType::f64);
  ref[0] = net.layer(0).step(tape, x, ref[0]);
  ref[1] = net.layer(1).step(tape, ref[0].h, ref[1]);
  ref[2] = net.layer(2).step(tape, ref[1].h, ref[2]);
  CHECK(ref[2].h.value().to_vector() == top.value().to_vector());
  CHECK(ref[1].c.value().to_vector() == state[1].c.value().to_vector());
  std::vector<LstmState> wrong(2);
  CHECK_THROWS_AS(net.step(tape, x, wrong), Error);
}

TEST_CASE("rnn cells: float64 gradient checks over three steps") {
  const int64_t B = 2, I = 3, H = 3, T = 3;
  GradCheckOptions opts;

  SUBCASE("LstmCell") {
    ParameterSet params(DType::f64);
    Rng rng(5);
    LstmCell cell(params, "lstm", I, H, rng);
    const Tensor xs = sequence(B, T, I, 0.2);
    // Parameters: step() path from a zero state.
    auto loss = [&](Tape& tape) {
      LstmState s = cell.zero_state(tape, B, DType::f64);
      Var x = tape.input(xs);
      Var l;
      for (int64_t t = 0; t < T; ++t) {
        s = cell.step(tape, reshape(slice(x, 1, t, 1), Shape{B, I}), s);
        Var term = add(project(s.h, int(t)), project(s.c, int(t) + 7));
        l = l.defined() ? add(l, term) : term;
      }
      return l;
    };
    GradCheckResult r = check_parameter_gradients("lstm params", params, loss, opts);
    CAPTURE(r.message);
    CAPTURE(r.max_rel_err);
    CHECK(r.passed);
    // Inputs and initial state: the projected path.
    std::vector<GradInput> inputs = {{xs},
                                     {sequence(B, 1, H, 1.0).view(Shape{B, H})},
                                     {sequence(B, 1, H, 2.0).view(Shape{B, H})}};
    r = check_gradients("lstm inputs", inputs, [&](Tape& tape, std::span<const Var> v) {
      Var xw = cell.project_inputs(v[0]);
      LstmState s{v[1], v[2]};
      std::vector<Var> hs;
      for (int64_t t = 0; t < T; ++t) {
        s = cell.step_projected(tape, reshape(slice(xw, 1, t, 1), Shape{B, 4 * H}), s);
        hs.push_back(s.h);
      }
      hs.push_back(s.c);
      return stack(hs, 0);
    });
    CAPTURE(r.message);
    CAPTURE(r.max_rel_err);
    CHECK(r.passed);
  }

  SUBCASE("StackedLstm") {
    ParameterSet params(DType::f64);
    Rng rng(6);
    StackedLstm net(params, "stack", I, H, 2, rng);
    const Tensor xs = sequence(B, T, I, 0.4);
    auto loss = [&](Tape& tape) {
      std::vector<LstmState> s = net.zero_state(tape, B, DType::f64);
      Var xw = net.project_inputs(tape.input(xs));
      Var l;
      for (int64_t t = 0; t < T; ++t) {
        Var h = net.step_projected(tape, reshape(slice(xw, 1, t, 1), Shape{B, 4 * H}), s);
        Var term = add(project(h, int(t)), project(s[0].c, int(t) + 3));
        l = l.defined() ? add(l, term) : term;
      }
      return l;
    };
    GradCheckResult r = check_parameter_gradients("stacked lstm params", params, loss, opts);
    CAPTURE(r.message);
    CAPTURE(r.max_rel_err);
    CHECK(r.passed);
    r = check_gradients("stacked lstm inputs", {{xs}}, [&](Tape& tape, std::span<const Var> v) {
      std::vector<LstmState> s = net.zero_state(tape, B, DType::f64);
      std::vector<Var> hs;
      for (int64_t t = 0; t < T; ++t)
        hs.push_back(net.step(tape, reshape(slice(v[0], 1, t, 1), Shape{B, I}), s));
      return stack(hs, 0);
    });
    CAPTURE(r.message);
    CAPTURE(r.max_rel_err);
    CHECK(r.passed);
  }

  SUBCASE("GruCell") {
    ParameterSet params(DType::f64);
    Rng rng(7);
    GruCell cell(params, "gru", I, H, rng);
    // Non-zero biases, so their gradients are checked away from the initial zeros.
    fill_param(params.get("gru.b"), 0.3, 0.4);
    const Tensor xs = sequence(B, T, I, 0.6);
    auto loss = [&](Tape& tape) {
      Var h = cell.zero_state(tape, B, DType::f64);
      Var x = tape.input(xs);
      Var l;
      for (int64_t t = 0; t < T; ++t) {
        h = cell.step(tape, reshape(slice(x, 1, t, 1), Shape{B, I}), h);
        Var term = project(h, int(t));
        l = l.defined() ? add(l, term) : term;
      }
      return l;
    };
    GradCheckResult r = check_parameter_gradients("gru params", params, loss, opts);
    CAPTURE(r.message);
    CAPTURE(r.max_rel_err);
    CHECK(r.passed);
    std::vector<GradInput> inputs = {{xs}, {sequence(B, 1, H, 3.0).view(Shape{B, H})}};
    r = check_gradients("gru inputs", inputs, [&](Tape& tape, std::span<const Var> v) {
      Var xw = cell.project_inputs(v[0]);
      Var h = v[1];
      std::vector<Var> hs;
      for (int64_t t = 0; t < T; ++t) {
        h = cell.step_projected(tape, reshape(slice(xw, 1, t, 1), Shape{B, 3 * H}), h);
        hs.push_back(h);
      }
      return stack(hs, 0);
    });
    CAPTURE(r.message);
    CAPTURE(r.max_rel_err);
    CHECK(r.passed);
  }
}

TEST_CASE(
    "LstmCell split input and layers::TokenLstm (table projected, or per step for a vocabulary "
    "larger than the pass's tokens): embed, concat and step, the same function") {
  // Input [e(id_t) ; r_t]: E = 3 embedded features, r_t 2 more, over three steps of B = 4 rows.
  const int64_t B = 4, E = 3, R = 2, H = 3, V = 5, T = 3;
  ParameterSet params(DType::f64);
  Rng rng(11);
  const layers::Embedding embed(params, "emb", V, E, rng);
  const LstmCell cell(params, "lstm", E + R, H, rng);
  fill_param(params.get("lstm.b"), 0.2, 0.3);
  const double ids[T][B] = {{0, 4, 2, 2}, {1, 1, 3, 0}, {4, 3, 0, 2}};
  const Tensor rest = sequence(T, B, R, 0.5);
  // loss = sum over steps of project(h) + project(c); both ways return it with the final h, and
  // leave the parameters' and r's gradients behind.
  // way 0: embed, concat, step; 1: TokenLstm with the projected table; 2: TokenLstm told of one
  // token (fewer than V), so it projects each step's looked-up rows instead.
  auto run = [&](Tape& tape, int way, Var& r) {
    const bool token_lstm = way > 0;
    r = tape.input(rest, true);
    LstmState s = cell.zero_state(tape, B, DType::f64);
    std::optional<layers::TokenLstm> lstm;
    if (token_lstm) lstm.emplace(tape, embed, cell, way == 2 ? 1 : -1);
    Var loss;
    for (int64_t t = 0; t < T; ++t) {
      Tensor id = Tensor::empty(Shape{B, 1}, DType::f64);
      for (int64_t b = 0; b < B; ++b) id.set(b, ids[t][b]);
      Var rt = reshape(slice(r, 0, t, 1), Shape{B, R});
      s = token_lstm
              ? lstm->step(tape, tape.input(id), rt, s)
              : cell.step(tape, concat({embed(tape, reshape(tape.input(id), Shape{B})), rt}, 1), s);
      Var term = add(project(s.h, int(t)), project(s.c, int(t) + 5));
      loss = loss.defined() ? add(loss, term) : term;
    }
    tape.backward(loss);
    return std::make_pair(loss.value().at(0), s.h.value());
  };
  std::vector<Tensor> grads[3];
  std::pair<double, Tensor> out[3];
  Tensor rest_grad[3];
  for (int way = 0; way < 3; ++way) {
    params.zero_grad();
    Tape tape;
    Var r;
    out[way] = run(tape, way, r);
    rest_grad[way] = r.grad().clone();
    for (size_t i = 0; i < params.size(); ++i) grads[way].push_back(params[i].grad.clone());
  }
  for (int way = 1; way < 3; ++way) {
    CAPTURE(way);
    CHECK(out[way].first == doctest::Approx(out[0].first).epsilon(1e-13));
    for (int64_t i = 0; i < out[0].second.numel(); ++i)
      CHECK(out[way].second.at(i) == doctest::Approx(out[0].second.at(i)).epsilon(1e-13));
    for (int64_t i = 0; i < rest_grad[0].numel(); ++i)
      CHECK(rest_grad[way].at(i) == doctest::Approx(rest_grad[0].at(i)).epsilon(1e-12));
    for (size_t p = 0; p < params.size(); ++p) {
      CAPTURE(params[p].name);
      double norm = 0;
      for (int64_t i = 0; i < grads[0][p].numel(); ++i) {
        norm += std::abs(grads[0][p].at(i));
        CHECK(grads[way][p].at(i) ==
              doctest::Approx(grads[0][p].at(i)).epsilon(1e-12).scale(1e-12));
      }
      CHECK(norm > 0);  // every parameter is reached, so the comparison means something
    }
  }
  // The split path's own gradient check, both ways of projecting: parameters, then r.
  for (const int64_t tokens : {int64_t(-1), int64_t(1)}) {
    CAPTURE(tokens);
    GradCheckResult g = check_parameter_gradients(
        "token lstm params", params,
        [&](Tape& tape) {
          const layers::TokenLstm lstm(tape, embed, cell, tokens);
          LstmState s = cell.zero_state(tape, B, DType::f64);
          Var loss;
          for (int64_t t = 0; t < T; ++t) {
            Tensor id = Tensor::empty(Shape{B}, DType::f64);
            for (int64_t b = 0; b < B; ++b) id.set(b, ids[t][b]);
            s = lstm.step(tape, tape.input(id),
                          reshape(slice(tape.input(rest), 0, t, 1), Shape{B, R}), s);
            Var term = project(s.h, int(t));
            loss = loss.defined() ? add(loss, term) : term;
          }
          return loss;
        },
        GradCheckOptions{});
    CAPTURE(g.message);
    CHECK(g.passed);
  }

  // Refused: a known part of 0 or more than the input, a step input on a wholly known input, ids
  // of the wrong shape, a table of the wrong height.
  Tape tape;
  CHECK_THROWS_WITH_AS(cell.split_input(tape, 0), doctest::Contains("1 to 5 features, got 0"),
                       Error);
  CHECK_THROWS_WITH_AS(cell.split_input(tape, 6), doctest::Contains("got 6"), Error);
  const LstmCell whole(params, "whole", E, H, rng);
  const layers::TokenLstm known(tape, embed, whole);
  const LstmState s0 = whole.zero_state(tape, B, DType::f64);
  const Var id = tape.input(Tensor::zeros(Shape{B}, DType::f64));
  CHECK(known.step(tape, id, Var{}, s0).h.shape() == Shape({B, H}));
  CHECK_THROWS_WITH_AS(known.step(tape, id, tape.input(rest), s0),
                       doctest::Contains("takes no further input"), Error);
  CHECK_THROWS_WITH_AS(
      known.step(tape, tape.input(Tensor::zeros(Shape{B, 2}, DType::f64)), Var{}, s0),
      doctest::Contains("ids must be [n] or [n, 1], got [4,2]"), Error);
  CHECK_THROWS_WITH_AS(embed.lookup(tape.input(Tensor::zeros(Shape{V + 1, 2}, DType::f64)), id),
                       doctest::Contains("emb: a table to look up must have 5 rows, got [6,2]"),
                       Error);
}

TEST_CASE("rnn cells: a steady-state sequence allocates nothing (forward and backward)") {
  const int64_t B = 2, I = 3, H = 4, T = 5;
  ParameterSet params(DType::f32);
  Rng rng(8);
  StackedLstm lstm(params, "lstm", I, H, 2, rng);
  GruCell gru(params, "gru", I, H, rng);
  Tensor xs = Tensor::full(Shape{B, T, I}, DType::f32, 0.25);
  Tape tape;
  std::vector<LstmState> state;
  state.reserve(2);
  uint64_t allocs[3] = {0, 0, 0};
  for (int run = 0; run < 3; ++run) {
    tape.reset();
    params.zero_grad();
    const uint64_t before = heap_allocations();
    Var x = tape.input(xs);
    Var xw = lstm.project_inputs(x);
    state.clear();
    for (int64_t l = 0; l < lstm.layers(); ++l)
      state.push_back(lstm.layer(l).zero_state(tape, B, DType::f32));
    Var h = gru.zero_state(tape, B, DType::f32);
    Var top;
    for (int64_t t = 0; t < T; ++t) {
      top = lstm.step_projected(tape, reshape(slice(xw, 1, t, 1), Shape{B, 4 * H}), state);
      h = gru.step(tape, reshape(slice(x, 1, t, 1), Shape{B, I}), h);
    }
    tape.backward(add(sum(top), sum(h)));
    allocs[run] = heap_allocations() - before;
  }
  CAPTURE(allocs[0]);
  CHECK(allocs[1] == 0);
  CHECK(allocs[2] == 0);
}
