// MemN2N: shapes, adjacent tying, linear start, empty memory slots (official and masked), the nil
// word, the schedule hooks (linear start, the official two-phase learning rate). Its float64
// gradient checks are test_model_registry's, as every model's; the position encoding and the check
// batch it shares with the other bAbI models are test_qa_helpers.cpp's.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "models/qa/memn2n.hpp"
#include "models/qa/position_encoding.hpp"
#include "ops/ops.hpp"

namespace memn2n_tests {

using namespace memgrad;

namespace {

const ModelInfo& memn2n_info() {
  for (const ModelInfo& m : all_models())
    if (m.name == "memn2n") return m;
  FAIL("memn2n is not registered");
  throw 0;
}

nlohmann::json tiny(bool linear_start) {
  nlohmann::json c = memn2n_info().check_configs.at(0);
  c.erase("variant");
  c["linear_start"] = linear_start;
  return c;
}

std::unique_ptr<MemN2N> make(const nlohmann::json& config, DType dtype = DType::f64) {
  return std::make_unique<MemN2N>(config, dtype, 7);
}

Batch check_batch(DType dtype = DType::f64) {
  Batch batch;
  Rng rng(11);
  memn2n_info().check_batch(rng, dtype, batch);
  return batch;
}

std::vector<double> logits(MemN2N& model, const Batch& batch) {
  Tape tape;
  return model.forward(tape, batch, ForwardOptions{}).predictions.value().to_vector();
}

// The batch with one more (empty) memory slot per sample.
Batch with_extra_slot(const Batch& in) {
  Batch out;
  const Tensor& s = in.get("story");
  const int64_t b = s.dim(0), m = s.dim(1), j = s.dim(2);
  Tensor story = out.field("story", Shape{b, m + 1, j}, s.dtype());
  Tensor time = out.field("time", Shape{b, m + 1}, s.dtype());
  Tensor mask = out.field("memory_mask", Shape{b, m + 1}, s.dtype());
  for (int64_t x = 0; x < b; ++x)
    for (int64_t k = 0; k < m; ++k) {
      for (int64_t w = 0; w < j; ++w)
        story.set((x * (m + 1) + k) * j + w, s.at((x * m + k) * j + w));
      time.set(x * (m + 1) + k, in.get("time").at(x * m + k));
      mask.set(x * (m + 1) + k, in.get("memory_mask").at(x * m + k));
    }
  out.field("query", in.get("query").shape(), s.dtype()).copy_from(in.get("query"));
  out.field("answer", in.get("answer").shape(), s.dtype()).copy_from(in.get("answer"));
  out.size = in.size;
  return out;
}

}  // namespace

TEST_CASE("memn2n: parameter counts follow adjacent tying, (K + 1)(V + M) d") {
  // Adjacent weight tying (Sukhbaatar et al. 2015, section 2.2): A^1 = B, A^{k+1} = C^k and
  // W^T = C^K leave K + 1 embedding matrices; with temporal encoding each holds, besides the V
  // words, the M time words (T_A and T_C tie like A and C). bAbI task 1 (V 20 with nil, M 10,
  // d 20, K 3): 2,400, the figure `memgrad bench` and docs/results/speed.md give.
  auto count = [](const nlohmann::json& c) { return make(c, DType::f32)->params().count(); };
  CHECK(count(nlohmann::json::object()) == (3 + 1) * (20 + 10) * 20);
  CHECK(count(nlohmann::json::object()) == 2400);
  // Joint training's dimensions (d 50, 50 memories), and bag of words without time words.
  CHECK(count({{"vocab_size", 177}, {"memory_size", 50}, {"embedding_dim", 50}}) ==
        (3 + 1) * (177 + 50) * 50);
  CHECK(count({{"temporal_encoding", false}, {"hops", 2}}) == (2 + 1) * 20 * 20);
}

TEST_CASE("memn2n: output shapes and a summed loss") {
  auto model = make(tiny(false));
  const Batch batch = check_batch();
  Tape tape;
  ForwardResult r = model->forward(tape, batch, ForwardOptions{});
  // vocab 7 + 4 time words.
  CHECK(r.predictions.shape() == Shape{3, 11});
  CHECK(r.loss.shape() == Shape{1});
  // "sum" is 3x the mean cross-entropy.
  nlohmann::json mean_cfg = tiny(false);
  mean_cfg["loss"] = "mean";
  auto mean_model = make(mean_cfg);
  Tape tape2;
  const double mean_loss = mean_model->forward(tape2, batch, ForwardOptions{}).loss.value().at(0);
  CHECK(r.loss.value().at(0) == doctest::Approx(3 * mean_loss).epsilon(1e-12));
}

// The forward written out with loops from the equations (models/qa/memn2n.hpp), with the position
// encoding matrix itself: checks the model's bag-of-words factorisation of l and everything else.
std::vector<double> reference_logits(MemN2N& model, const Batch& batch) {
  const nlohmann::json c = model.config();
  const int64_t d = c["embedding_dim"], vocab = c["vocab_size"], hops = c["hops"];
  const bool te = c["temporal_encoding"], pe = c["position_encoding"];
  // Official memory: memory_size slots, the empty ones with score 0 inside the softmax.
  const bool masked = c["mask_empty_slots"];
  const int64_t slots = c["memory_size"];
  const Tensor &story = batch.get("story"), &time = batch.get("time"),
               &mask = batch.get("memory_mask"), &query = batch.get("query");
  const int64_t b = story.dim(0), m = story.dim(1), j = story.dim(2), jp = te ? j + 1 : j;
  const Tensor l = pe ? qa::position_encoding(jp, jp, d, DType::f64)
                      : Tensor::full(Shape{jp, d}, DType::f64, 1.0);
  auto row = [&](const Parameter& t, int64_t id, int64_t k) { return t.value.at(id * d + k); };
  auto embed = [&](const Parameter& t, int64_t s, int64_t i) {  // memory i of sample s
    std::vector<double> e(size_t(d), 0.0);
    for (int64_t k = 0; k < d; ++k) {
      for (int64_t w = 0; w < j; ++w)
        e[size_t(k)] += l.at(w * d + k) * row(t, int64_t(story.at((s * m + i) * j + w)), k);
      const int64_t tau = int64_t(time.at(s * m + i));
      if (te) e[size_t(k)] += l.at(j * d + k) * row(t, tau > 0 ? vocab + tau - 1 : 0, k);
    }
    return e;
  };
  const int64_t rows = model.table_rows();
  std::vector<double> out;
  for (int64_t s = 0; s < b; ++s) {
    std::vector<double> u(size_t(d), 0.0);
    for (int64_t k = 0; k < d; ++k)
      for (int64_t w = 0; w < j; ++w)
        u[size_t(k)] += l.at(w * d + k) * row(model.table_a(1), int64_t(query.at(s * j + w)), k);
    for (int64_t h = 1; h <= hops; ++h) {
      std::vector<double> score(size_t(m), 0.0), p(size_t(m), 0.0), o(size_t(d), 0.0);
      double mx = -1e300, z = 0;
      for (int64_t i = 0; i < m; ++i) {
        const auto mi = embed(model.table_a(h), s, i);
        for (int64_t k = 0; k < d; ++k) score[size_t(i)] += u[size_t(k)] * mi[size_t(k)];
        if (mask.at(s * m + i) != 0) mx = std::max(mx, score[size_t(i)]);
      }
      int64_t used = 0;
      for (int64_t i = 0; i < m; ++i) {
        if (mask.at(s * m + i) == 0) continue;
        ++used;
        p[size_t(i)] =
            model.linear_start_active() ? score[size_t(i)] : std::exp(score[size_t(i)] - mx);
        z += p[size_t(i)];
      }
      if (!masked && !model.linear_start_active())
        z += double(slots - used) * std::exp(0.0 - mx);  // the empty slots
      for (int64_t i = 0; i < m; ++i) {
        if (!model.linear_start_active()) p[size_t(i)] /= z;
        const auto ci = embed(model.table_c(h), s, i);
        for (int64_t k = 0; k < d; ++k) o[size_t(k)] += p[size_t(i)] * ci[size_t(k)];
      }
      for (int64_t k = 0; k < d; ++k) u[size_t(k)] += o[size_t(k)];
    }
    for (int64_t v = 0; v < rows; ++v) {
      double x = 0;
      for (int64_t k = 0; k < d; ++k) x += u[size_t(k)] * row(model.table_c(hops), v, k);
      out.push_back(x);
    }
  }
  return out;
}

TEST_CASE("memn2n: the forward matches the equations written out with loops") {
  for (nlohmann::json cfg : memn2n_info().check_configs) {
    const std::string variant = cfg["variant"];
    cfg.erase("variant");
    for (bool ls : {false, true}) {
      INFO(variant, ", linear start ", ls);
      cfg["linear_start"] = ls;
      auto model = make(cfg);
      // Non-zero nil rows, so that padding words are part of the comparison too.
      for (size_t i = 0; i < model->params().size(); ++i)
        for (int64_t k = 0; k < 4; ++k) model->params()[i].value.set(k, 0.1 * double(k + 1));
      const Batch batch = check_batch();
      const auto got = logits(*model, batch);
      const auto want = reference_logits(*model, batch);
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i)
        CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-12));
    }
  }
}

TEST_CASE("memn2n: adjacent tying makes A^{k+1} and C^k one parameter") {
  auto model = make(tiny(false));
  ParameterSet& p = model->params();
  REQUIRE(p.size() == 4);  // 3 hops: A1 (= B), C1 (= A2), C2 (= A3), C3 (= W^T)
  CHECK(p[0].name == "A1_B");
  CHECK(p[1].name == "C1_A2");
  CHECK(p[2].name == "C2_A3");
  CHECK(p[3].name == "C3_W");
  for (int64_t k = 1; k < model->hops(); ++k) CHECK(&model->table_a(k + 1) == &model->table_c(k));
  for (size_t i = 0; i < p.size(); ++i) CHECK(p[i].value.shape() == Shape{11, 4});
  // Every table receives a gradient (A1 from the question and hop 1, C3 from the answer layer).
  Tape tape;
  const Batch batch = check_batch();
  tape.backward(model->forward(tape, batch, ForwardOptions{}).loss);
  for (size_t i = 0; i < p.size(); ++i) {
    double norm = 0;
    for (int64_t e = 0; e < p[i].grad.numel(); ++e) norm += std::fabs(p[i].grad.at(e));
    CHECK(norm > 0);
  }
}

TEST_CASE("memn2n: linear start removes the attention softmax") {
  nlohmann::json c = tiny(true);
  c["ls_lr_multiplier"] = 0.5;
  auto model = make(c);
  const Batch batch = check_batch();
  CHECK(model->linear_start_active());
  CHECK(model->lr_multiplier() == 0.5);
  const auto with_ls = logits(*model, batch);
  model->set_linear_start(false);
  CHECK(model->lr_multiplier() == 1.0);
  const auto without = logits(*model, batch);
  double diff = 0;
  for (size_t i = 0; i < with_ls.size(); ++i) diff += std::fabs(with_ls[i] - without[i]);
  CHECK(diff > 1e-3);
}

// The hop-1 attention of a model (B = 3 samples, 4 slots).
Tensor hop1_attention(MemN2N& model, const Batch& batch) {
  Trace trace;
  ForwardOptions opts;
  opts.trace = &trace;
  Tape tape;
  model.forward(tape, batch, opts);
  REQUIRE(trace.entries.size() == 4);  // 3 hops + answer logits
  CHECK(trace.entries[0].first == "hop1/attention");
  return trace.entries[0].second;
}

TEST_CASE("memn2n: empty memory slots in the attention (official) or masked out") {
  // The check batch has 4 slots (memory_size 4); its samples have 4, 2 and 3 memories.
  const Batch batch = check_batch();
  const Tensor& mask = batch.get("memory_mask");
  nlohmann::json c = tiny(false);
  c["mask_empty_slots"] = true;
  auto masked = make(c);
  c["mask_empty_slots"] = false;
  auto official = make(c);  // the same seed, so the same tables
  const Tensor pm = hop1_attention(*masked, batch), po = hop1_attention(*official, batch);
  for (int64_t s = 0; s < 3; ++s) {
    double tm = 0, to = 0, used = 0;
    for (int64_t k = 0; k < 4; ++k) {
      tm += pm.at(s * 4 + k);
      to += po.at(s * 4 + k);
      used += mask.at(s * 4 + k);
      if (mask.at(s * 4 + k) == 0) {  // no weight on the slot itself either way
        CHECK(pm.at(s * 4 + k) == 0.0);
        CHECK(po.at(s * 4 + k) == 0.0);
      }
    }
    // Masked: the weights sum to 1 over the memories. Official: the empty slots keep weight
    // (4 - used) e^0 / Z, the memories the rest; renormalised, the two agree.
    CHECK(tm == doctest::Approx(1.0).epsilon(1e-12));
    if (used == 4)
      CHECK(to == doctest::Approx(1.0).epsilon(1e-12));
    else
      CHECK(to < 1.0 - 1e-6);
    for (int64_t k = 0; k < 4; ++k)
      CHECK(po.at(s * 4 + k) / to == doctest::Approx(pm.at(s * 4 + k)).epsilon(1e-12));
  }
}

TEST_CASE("memn2n: batch padding changes neither the loss nor a gradient") {
  for (bool ls : {false, true})
    for (bool masked : {false, true}) {
      INFO("linear start ", ls, ", mask_empty_slots ", masked);
      nlohmann::json c = tiny(ls);
      c["mask_empty_slots"] = masked;
      auto model = make(c);
      // A non-zero nil row must not matter for empty slots either (it does for padding words
      // inside sentences, which is why after_update keeps it at zero).
      for (size_t i = 0; i < model->params().size(); ++i)
        for (int64_t k = 0; k < 4; ++k) model->params()[i].value.set(k, 0.3 + 0.1 * double(k));
      const Batch a = check_batch();
      const Batch b = with_extra_slot(a);
      auto run = [&](const Batch& batch) {
        model->params().zero_grad();
        Tape tape;
        ForwardResult r = model->forward(tape, batch, ForwardOptions{});
        tape.backward(r.loss);
        std::vector<double> out = r.predictions.value().to_vector();
        for (size_t i = 0; i < model->params().size(); ++i)
          for (double g : model->params()[i].grad.to_vector()) out.push_back(g);
        out.push_back(r.loss.value().at(0));
        return out;
      };
      const auto x = run(a), y = run(b);
      REQUIRE(x.size() == y.size());
      for (size_t i = 0; i < x.size(); ++i) CHECK(x[i] == doctest::Approx(y[i]).epsilon(1e-12));
    }
}

TEST_CASE("memn2n: the nil word's rows are zero and stay zero after after_update()") {
  auto model = make(tiny(false));
  ParameterSet& p = model->params();
  for (size_t i = 0; i < p.size(); ++i)
    for (int64_t k = 0; k < 4; ++k) CHECK(p[i].value.at(k) == 0.0);
  // A plain SGD step moves the nil rows (padding words inside sentences reach them) ...
  Tape tape;
  const Batch batch = check_batch();
  tape.backward(model->forward(tape, batch, ForwardOptions{}).loss);
  double nil_grad = 0;
  for (size_t i = 0; i < p.size(); ++i)
    for (int64_t k = 0; k < 4; ++k) nil_grad += std::fabs(p[i].grad.at(k));
  CHECK(nil_grad > 0);
  for (size_t i = 0; i < p.size(); ++i)
    for (int64_t e = 0; e < p[i].value.numel(); ++e)
      p[i].value.set(e, p[i].value.at(e) - 0.1 * p[i].grad.at(e));
  // ... and after_update puts them back at zero, leaving every other row alone.
  const double other = p[1].value.at(4 * 3 + 1);
  model->after_update();
  for (size_t i = 0; i < p.size(); ++i)
    for (int64_t k = 0; k < 4; ++k) CHECK(p[i].value.at(k) == 0.0);
  CHECK(p[1].value.at(4 * 3 + 1) == other);
}

TEST_CASE("memn2n: linear start schedules (official epochs, paper's validation rule)") {
  SUBCASE("epochs") {
    nlohmann::json c = tiny(true);
    c["ls_epochs"] = 3;
    auto model = make(c);
    CHECK(model->on_epoch_end(1, 5.0).empty());
    CHECK(model->on_epoch_end(2, 9.0).empty());  // the validation loss does not matter here
    CHECK(model->linear_start_active());
    const std::string note = model->on_epoch_end(3, 1.0);
    CHECK(note.find("linear start ended after epoch 3") != std::string::npos);
    CHECK_FALSE(model->linear_start_active());
    CHECK(model->lr_multiplier() == 1.0);
    CHECK(model->on_epoch_end(4, 1.0).empty());
  }
  SUBCASE("validation") {
    nlohmann::json c = tiny(true);
    c["ls_rule"] = "validation";
    auto model = make(c);
    CHECK(model->on_epoch_end(1, 5.0).empty());
    CHECK(model->on_epoch_end(2, 4.0).empty());
    // Exact resume: the state carries LS and the last validation loss.
    const nlohmann::json state = model->training_state();
    auto resumed = make(c);
    resumed->set_training_state(state);
    CHECK(resumed->on_epoch_end(3, 3.5).empty());
    CHECK_FALSE(resumed->on_epoch_end(4, 3.6).empty());
    CHECK_FALSE(resumed->linear_start_active());
    // A run without validation batches (NaN) falls back to ls_epochs.
    auto no_valid = make(c);
    CHECK(no_valid->on_epoch_end(19, std::nan("")).empty());
    CHECK_FALSE(no_valid->on_epoch_end(20, std::nan("")).empty());
  }
  SUBCASE("off") {
    auto model = make(tiny(false));
    CHECK(model->lr_multiplier() == 1.0);
    CHECK_FALSE(model->linear_start_active());
    CHECK(model->on_epoch_end(1, 1.0).empty());
    auto restored = make(tiny(true));
    restored->set_training_state(model->training_state());
    CHECK_FALSE(restored->linear_start_active());
  }
}

TEST_CASE("memn2n: the official two-phase learning-rate schedule") {
  // The trainer's lr in the run's epoch e (from 0): lr * 0.5^floor(e / 25) * lr_multiplier().
  auto effective = [](MemN2N& model, int64_t e) {
    return 0.005 * std::pow(0.5, double(e / 25)) * model.lr_multiplier();
  };
  SUBCASE("restart (default): 20 LS epochs at 0.005, then 100 with train.m's halving") {
    nlohmann::json c = tiny(true);
    c["ls_epochs"] = 20;
    auto model = make(c);
    for (int64_t e = 0; e < 120; ++e) {
      if (e > 0) model->on_epoch_end(e, 1.0);  // the trainer calls it after each epoch
      // train.m: lrate = 0.005, halved at the start of epochs 25, 50, 75, 100 (counted from 1)
      // of the second phase; LS (ls_lrate_decay_step 21) never halves.
      const int64_t ep = e - 20 + 1;
      const double want = e < 20 ? 0.005 : 0.005 * std::pow(0.5, double(ep / 25));
      INFO("epoch ", e);
      CHECK(model->linear_start_active() == (e < 20));
      CHECK(effective(*model, e) == doctest::Approx(want).epsilon(1e-15));
      if (e == 60) {  // an exact resume carries the epoch and the end of LS
        auto resumed = make(c);
        resumed->set_training_state(model->training_state());
        CHECK(resumed->lr_multiplier() == model->lr_multiplier());
      }
    }
  }
  SUBCASE("no restart: the trainer's halving over the run") {
    nlohmann::json c = tiny(true);
    c["ls_epochs"] = 20;
    c["lr_decay_restart"] = false;
    auto model = make(c);
    for (int64_t e = 1; e < 120; ++e) {
      model->on_epoch_end(e, 1.0);
      CHECK(model->lr_multiplier() == 1.0);
    }
  }
  SUBCASE("no linear start: train.m's halving from the first epoch") {
    auto model = make(tiny(false));
    for (int64_t e = 0; e < 100; ++e) {
      if (e > 0) model->on_epoch_end(e, 1.0);
      INFO("epoch ", e);
      CHECK(effective(*model, e) == doctest::Approx(0.005 * std::pow(0.5, double((e + 1) / 25))));
    }
  }
}

TEST_CASE("memn2n: bad configs and batches are named") {
  CHECK_THROWS_WITH_AS(make({{"hopz", 2}}), doctest::Contains("unknown config key 'hopz'"), Error);
  CHECK_THROWS_WITH_AS(make({{"ls_rule", "sometimes"}}), doctest::Contains("ls_rule"), Error);
  auto model = make(tiny(false));
  Batch batch = check_batch();
  Batch missing;
  missing.field("story", batch.get("story").shape(), DType::f64);
  Tape tape;
  CHECK_THROWS_WITH_AS(model->forward(tape, missing, ForwardOptions{}),
                       doctest::Contains("memn2n: the batch has no field 'time'"), Error);
  Batch wrong = check_batch();
  wrong.field("query", Shape{3, 5}, DType::f64);
  CHECK_THROWS_WITH_AS(model->forward(tape, wrong, ForwardOptions{}), doctest::Contains("'query'"),
                       Error);
  Batch late = check_batch();
  late.field("time", Shape{3, 4}, DType::f64).fill(9);  // beyond memory_size 4
  CHECK_THROWS_WITH_AS(model->forward(tape, late, ForwardOptions{}),
                       doctest::Contains("'time' holds 9"), Error);
}

TEST_CASE("memn2n: float32 and float64 forwards agree") {
  auto m64 = make(tiny(false), DType::f64);
  auto m32 = make(tiny(false), DType::f32);
  const auto a = logits(*m64, check_batch(DType::f64));
  const auto b = logits(*m32, check_batch(DType::f32));
  for (size_t i = 0; i < a.size(); ++i) CHECK(b[i] == doctest::Approx(a[i]).epsilon(1e-5));
}

}  // namespace memn2n_tests
