// DMN+: parameter count, exact masking of padding facts, the attention per pass in the trace, the
// position encoding's factorisation, a steady-state step without heap allocation, config errors.
// Its float64 gradient checks (every parameter of both registered variants, dropout replayed) are
// test_model_registry's, as every model's.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "engine/alloc_counter.hpp"
#include "models/qa/dmn_plus.hpp"
#include "ops/ops.hpp"

namespace dmn_plus_tests {

using namespace memgrad;

namespace {

const ModelInfo& info() {
  for (const ModelInfo& m : all_models())
    if (m.name == "dmn-plus") return m;
  FAIL("dmn-plus is not registered");
  throw 0;
}

// Registered check config `variant` (0: GRU answer, untied, paper PE; 1: linear answer, tied,
// MemN2N PE), without dropout unless asked.
nlohmann::json tiny(size_t variant, double dropout = 0.0) {
  nlohmann::json c = info().check_configs.at(variant);
  c.erase("variant");
  c["dropout"] = dropout;
  return c;
}

Batch check_batch(DType dtype = DType::f64) {
  Batch batch;
  Rng rng(11);
  info().check_batch(rng, dtype, batch);
  return batch;
}

// The batch with `extra` more padding fact slots per sample.
Batch with_padding(const Batch& in, int64_t extra) {
  Batch out;
  const Tensor& s = in.get("story");
  const int64_t b = s.dim(0), m = s.dim(1), j = s.dim(2), m2 = m + extra;
  Tensor story = out.field("story", Shape{b, m2, j}, s.dtype());
  Tensor time = out.field("time", Shape{b, m2}, s.dtype());
  Tensor mask = out.field("memory_mask", Shape{b, m2}, s.dtype());
  for (int64_t x = 0; x < b; ++x)
    for (int64_t k = 0; k < m; ++k) {
      for (int64_t w = 0; w < j; ++w) story.set((x * m2 + k) * j + w, s.at((x * m + k) * j + w));
      time.set(x * m2 + k, in.get("time").at(x * m + k));
      mask.set(x * m2 + k, in.get("memory_mask").at(x * m + k));
    }
  out.field("query", in.get("query").shape(), s.dtype()).copy_from(in.get("query"));
  out.field("answer", in.get("answer").shape(), s.dtype()).copy_from(in.get("answer"));
  out.size = in.size;
  return out;
}

}  // namespace

TEST_CASE("dmn-plus: parameter count of the paper's model (d = H = 80, 3 untied passes)") {
  const int64_t V = 20, d = 80, H = 80, T = 3;
  const int64_t gru = d * 3 * H + H * 3 * H + 3 * H;  // W, U, b of a GRU reading d
  const int64_t expected = V * d                      // embedding
                           + 3 * gru                  // fusion fwd, bwd; question
                           + 4 * H * H + H + H        // attention W1 (two halves), b1, W2 (no b2)
                           + 2 * H * H * 2 + 2 * H    // attention GRU: W, U [H, 2H], b
                           + T * (3 * H * H + H)      // untied memory updates
                           + (H * 3 * H * 2 + 3 * H)  // answer GRU reading q
                           + H * V + V;               // answer layer
  DmnPlus model(nlohmann::json::object(), DType::f32, 1);
  CHECK(model.params().count() == expected);
  nlohmann::json tied = {{"tied_memory_update", true}, {"answer", "linear"}};
  DmnPlus small(tied, DType::f32, 1);
  CHECK(small.params().count() == expected - 2 * (3 * H * H + H) - (H * 3 * H * 2 + 3 * H) + H * V);
}

TEST_CASE("dmn-plus: padding facts change neither the loss nor a gradient") {
  for (size_t variant : {size_t(0), size_t(1)}) {
    CAPTURE(variant);
    DmnPlus model(tiny(variant), DType::f64, 7);
    const Batch a = check_batch();
    const Batch b = with_padding(a, 2);
    auto run = [&](const Batch& batch) {
      model.params().zero_grad();
      Tape tape;
      ForwardResult r = model.forward(tape, batch, ForwardOptions{});
      tape.backward(r.loss);
      std::vector<double> out = r.predictions.value().to_vector();
      for (size_t i = 0; i < model.params().size(); ++i)
        for (double g : model.params()[i].grad.to_vector()) out.push_back(g);
      out.push_back(r.loss.value().at(0));
      return out;
    };
    const auto x = run(a), y = run(b);
    REQUIRE(x.size() == y.size());
    for (size_t i = 0; i < x.size(); ++i) CHECK(x[i] == doctest::Approx(y[i]).epsilon(1e-12));
  }
}

TEST_CASE("dmn-plus: the trace holds the attention per pass, a softmax over the real facts") {
  nlohmann::json c = tiny(0);
  DmnPlus model(c, DType::f64, 3);
  const Batch batch = check_batch();
  const Tensor& mask = batch.get("memory_mask");
  Trace trace;
  ForwardOptions opts;
  opts.training = false;
  opts.trace = &trace;
  Tape tape;
  const ForwardResult r = model.forward(tape, batch, opts);
  const int64_t passes = c["passes"];
  REQUIRE(trace.entries.size() == size_t(2 * passes + 1));
  for (int64_t t = 1; t <= passes; ++t) {
    const auto& [name, g] = trace.entries[size_t(2 * (t - 1))];
    CHECK(name == "episode/t" + std::to_string(t) + "/attention");
    CHECK(trace.entries[size_t(2 * t - 1)].first == "episode/t" + std::to_string(t) + "/memory");
    CHECK(trace.entries[size_t(2 * t - 1)].second.shape() == Shape{3, 4});
    REQUIRE(g.shape() == Shape{3, 4});
    for (int64_t s = 0; s < 3; ++s) {
      double total = 0;
      for (int64_t i = 0; i < 4; ++i) {
        total += g.at(s * 4 + i);
        if (mask.at(s * 4 + i) == 0)
          CHECK(g.at(s * 4 + i) == 0.0);
        else
          CHECK(g.at(s * 4 + i) > 0.0);
      }
      CHECK(total == doctest::Approx(1.0).epsilon(1e-12));
    }
  }
  CHECK(trace.entries.back().first == "answer_logits");
  CHECK(trace.entries.back().second.shape() == r.predictions.shape());
  // The passes attend differently: m^{t-1} enters the gates.
  double diff = 0;
  for (int64_t i = 0; i < 12; ++i)
    diff += std::fabs(trace.entries[0].second.at(i) - trace.entries[2].second.at(i));
  CHECK(diff > 1e-6);
}

TEST_CASE("dmn-plus: a fact's words are weighted by the position encoding") {
  // Swapping two words of a sentence changes the model's output under either position encoding:
  // the sentence reader is not a bag of words.
  for (const char* pe : {"paper", "memn2n"}) {
    CAPTURE(pe);
    nlohmann::json c = tiny(0);
    c["position_encoding"] = pe;
    DmnPlus model(c, DType::f64, 5);
    Batch batch = check_batch();
    auto logits = [&](const Batch& bt) {
      Tape tape;
      ForwardOptions o;
      o.training = false;
      return model.forward(tape, bt, o).predictions.value().to_vector();
    };
    const auto base = logits(batch);
    Tensor story = batch.get("story");  // shares the batch's storage
    const double w0 = story.at(0), w1 = story.at(1);
    REQUIRE(w0 != w1);
    story.set(0, w1);
    story.set(1, w0);
    const auto swapped = logits(batch);
    double diff = 0;
    for (size_t i = 0; i < base.size(); ++i) diff += std::fabs(base[i] - swapped[i]);
    CHECK(diff > 1e-6);
  }
}

TEST_CASE("dmn-plus: a steady-state training step allocates nothing on the heap") {
  DmnPlus model(tiny(0, 0.2), DType::f32, 1);
  const Batch small = check_batch(DType::f32), padded = with_padding(small, 3);
  Tape tape(3);
  tape.set_param_grads_in_place(true);
  tape.set_move_grads(true);
  uint64_t allocations = 0;
  for (int step = 0; step < 10; ++step) {
    model.params().zero_grad();
    tape.reset();
    tape.set_step(uint64_t(step));
    const uint64_t before = heap_allocations();
    // The larger batch first (as the trainer reserves memory with its largest batch).
    tape.backward(model.forward(tape, step % 2 == 0 ? padded : small, ForwardOptions{}).loss);
    if (step >= 4) allocations += heap_allocations() - before;
  }
  CHECK(allocations == 0);
}

TEST_CASE("dmn-plus: config and batch errors name the key or the field") {
  CHECK_THROWS_WITH_AS(DmnPlus({{"answer", "lstm"}}, DType::f64, 1), doctest::Contains("answer"),
                       Error);
  CHECK_THROWS_WITH_AS(DmnPlus({{"dropout", 1.0}}, DType::f64, 1), doctest::Contains("dropout"),
                       Error);
  CHECK_THROWS_WITH_AS(DmnPlus({{"position_encoding", "none"}}, DType::f64, 1),
                       doctest::Contains("position_encoding"), Error);
  CHECK_THROWS_WITH_AS(DmnPlus({{"passes", 0}}, DType::f64, 1), doctest::Contains("passes"), Error);
  DmnPlus model(tiny(0), DType::f64, 1);
  Batch batch = check_batch();
  Tensor query = batch.get("query");  // shares the batch's storage
  query.set(0, 99.0);                 // not a word id
  Tape tape;
  CHECK_THROWS_WITH_AS(model.forward(tape, batch, ForwardOptions{}), doctest::Contains("query"),
                       Error);
  Batch no_mask;
  no_mask.field("story", Shape{1, 1, 3}, DType::f64);
  Tape tape2;
  CHECK_THROWS_WITH_AS(model.forward(tape2, no_mask, ForwardOptions{}),
                       doctest::Contains("memory_mask"), Error);
}

TEST_CASE("dmn-plus: each sample's prediction is its own, whatever the order of the batch") {
  // The forward puts the samples in order of fact count; the predictions come back in the
  // batch's order: reversing the batch reverses the prediction rows and keeps the loss.
  DmnPlus model(tiny(0), DType::f64, 9);
  const Batch a = check_batch();
  Batch r;
  for (const auto& [name, t] : a.fields()) {
    Tensor out = r.field(name, t.shape(), t.dtype());
    const int64_t b = t.dim(0), row = t.numel() / b;
    for (int64_t s = 0; s < b; ++s)
      for (int64_t e = 0; e < row; ++e) out.set(s * row + e, t.at((b - 1 - s) * row + e));
  }
  r.size = a.size;
  ForwardOptions o;
  o.training = false;
  Tape ta, tr;
  const ForwardResult x = model.forward(ta, a, o), y = model.forward(tr, r, o);
  CHECK(x.loss.value().at(0) == doctest::Approx(y.loss.value().at(0)).epsilon(1e-12));
  const Tensor &px = x.predictions.value(), &py = y.predictions.value();
  const int64_t classes = px.dim(1);
  for (int64_t s = 0; s < 3; ++s)
    for (int64_t c = 0; c < classes; ++c)
      CHECK(px.at(s * classes + c) == doctest::Approx(py.at((2 - s) * classes + c)).epsilon(1e-12));
  // A fact after an empty slot is refused: facts come first.
  Batch gap = check_batch();
  Tensor mask = gap.get("memory_mask");  // shares the batch's storage
  mask.set(1 * 4 + 3, 1.0);              // sample 1 has 2 facts: slot 3 after empty slot 2
  Tape tg;
  CHECK_THROWS_WITH_AS(model.forward(tg, gap, o), doctest::Contains("facts first"), Error);
}

}  // namespace dmn_plus_tests
