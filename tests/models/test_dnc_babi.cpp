// The DNC on bAbI's story view (models/qa/dnc_babi.hpp): shapes and a loss only at the slots,
// padding after a story's end changes no loss or gradient, a tiny model overfits a recall task,
// a steady-state step allocates nothing, and bad batches are named. Gradients are checked by the
// registry's check configs (test_model_registry.cpp).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "engine/alloc_counter.hpp"
#include "engine/optimizer.hpp"
#include "models/qa/dnc_babi.hpp"
#include "ops/ops.hpp"

namespace dnc_babi_tests {

using namespace memgrad;

namespace {

nlohmann::json tiny() {
  return {{"vocab_size", 8}, {"embedding", 6},    {"hidden", 16},
          {"word_size", 6},  {"memory_slots", 6}, {"read_heads", 1}};
}

// B stories "a b c -" (answer a) padded to T >= 4; a in 2..4, b and c in 5..7.
Batch recall_batch(int64_t B, int64_t T, DType dtype, uint64_t seed) {
  Batch batch;
  for (const char* f : {"words", "words_mask", "answer_slots", "answers"})
    batch.field(f, Shape{B, T}, dtype);
  Tensor& w = batch.field("words", Shape{B, T}, dtype);
  Tensor& m = batch.field("words_mask", Shape{B, T}, dtype);
  Tensor& s = batch.field("answer_slots", Shape{B, T}, dtype);
  Tensor& a = batch.field("answers", Shape{B, T}, dtype);
  Rng rng(seed);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t first = 2 + int64_t(b % 3);
    const int64_t row[4] = {first, 5 + int64_t(rng.below(3)), 5 + int64_t(rng.below(3)), 1};
    for (int64_t t = 0; t < 4; ++t) {
      w.set(b * T + t, double(row[t]));
      m.set(b * T + t, 1);
    }
    s.set(b * T + 3, 1);
    a.set(b * T + 3, double(first));
  }
  batch.size = B;
  return batch;
}

struct Run {
  double loss;
  std::vector<double> grads;
  Tensor predictions;
};

Run run(DncBabi& model, const Batch& batch) {
  model.params().zero_grad();
  Tape tape;
  const ForwardResult out = model.forward(tape, batch, ForwardOptions{});
  tape.backward(out.loss);
  Run r{out.loss.value().at(0), {}, out.predictions.value().clone()};
  for (size_t i = 0; i < model.params().size(); ++i)
    for (double g : model.params()[i].grad.to_vector()) r.grads.push_back(g);
  return r;
}

}  // namespace

TEST_CASE("dnc-babi: predictions at every position, the loss at the slots only") {
  DncBabi model(tiny(), DType::f64, 1);
  const Batch batch = recall_batch(3, 6, DType::f64, 2);
  Tape tape;
  const ForwardResult out = model.forward(tape, batch, ForwardOptions{});
  CHECK(out.predictions.shape() == Shape{3, 6, 8});
  CHECK(out.loss_terms == 3);
  // The loss is the mean cross-entropy at the 3 slots, from the predictions.
  const std::vector<double> p = out.predictions.value().to_vector();
  double want = 0;
  for (int64_t b = 0; b < 3; ++b) {
    const double* row = p.data() + (b * 6 + 3) * 8;
    double z = 0;
    for (int c = 0; c < 8; ++c) z += std::exp(row[c]);
    want -= row[int(batch.get("answers").at(b * 6 + 3))] - std::log(z);
  }
  CHECK(out.loss.value().at(0) == doctest::Approx(want / 3).epsilon(1e-12));
}

TEST_CASE("dnc-babi: padding after a story's end changes no loss, prediction or gradient") {
  DncBabi model(tiny(), DType::f64, 3);
  const Run short_run = run(model, recall_batch(2, 4, DType::f64, 5));
  const Run padded = run(model, recall_batch(2, 9, DType::f64, 5));
  CHECK(padded.loss == doctest::Approx(short_run.loss).epsilon(1e-12));
  REQUIRE(padded.grads.size() == short_run.grads.size());
  for (size_t i = 0; i < padded.grads.size(); ++i)
    CHECK(padded.grads[i] == doctest::Approx(short_run.grads[i]).epsilon(1e-10));
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 4; ++t)
      for (int64_t c = 0; c < 8; ++c)
        CHECK(padded.predictions.at((b * 9 + t) * 8 + c) ==
              doctest::Approx(short_run.predictions.at((b * 4 + t) * 8 + c)).epsilon(1e-12));
}

TEST_CASE("dnc-babi: a tiny model overfits a recall task (answer the story's first word)") {
  DncBabi model(tiny(), DType::f32, 7);
  Adam adam(model.params(), 0.02);
  const Batch batch = recall_batch(12, 4, DType::f32, 11);
  double first = 0, last = 0;
  for (int step = 0; step < 300; ++step) {
    const Run r = run(model, batch);
    if (step == 0) first = r.loss;
    last = r.loss;
    adam.step();
  }
  CHECK(first > 0.8);  // about log(8) at the start
  CHECK(last < 0.05);
  const Run r = run(model, batch);
  for (int64_t b = 0; b < 12; ++b) {
    int best = 0;
    for (int c = 1; c < 8; ++c)
      if (r.predictions.at((b * 4 + 3) * 8 + c) > r.predictions.at((b * 4 + 3) * 8 + best))
        best = c;
    CHECK(best == int(batch.get("answers").at(b * 4 + 3)));
  }
}

TEST_CASE("dnc-babi: a steady-state training step allocates nothing on the heap") {
  DncBabi model(tiny(), DType::f32, 1);
  const Batch batch = recall_batch(4, 7, DType::f32, 1);
  Tape tape(3);
  tape.set_param_grads_in_place(true);
  tape.set_move_grads(true);
  uint64_t allocations = 0;
  for (int step = 0; step < 8; ++step) {
    model.params().zero_grad();
    tape.reset();
    tape.set_step(uint64_t(step));
    const uint64_t before = heap_allocations();
    tape.backward(model.forward(tape, batch, ForwardOptions{}).loss);
    if (step >= 4) allocations += heap_allocations() - before;  // after warm-up
  }
  CHECK(allocations == 0);
}

TEST_CASE("dnc-babi: bad configs and batches are named") {
  CHECK_THROWS_WITH_AS(DncBabi({{"read_heds", 2}}, DType::f32, 1), doctest::Contains("read_heds"),
                       Error);
  CHECK_THROWS_WITH_AS(DncBabi({{"clip_controller", -1.0}}, DType::f32, 1),
                       doctest::Contains("clip_controller"), Error);
  DncBabi model(tiny(), DType::f32, 1);
  Batch batch = recall_batch(2, 4, DType::f32, 1);
  batch.field("answers", Shape{2, 5}, DType::f32);
  Tape tape;
  CHECK_THROWS_WITH_AS(model.forward(tape, batch, ForwardOptions{}), doctest::Contains("answers"),
                       Error);
  Batch empty;
  CHECK_THROWS_WITH_AS(model.forward(tape, empty, ForwardOptions{}), doctest::Contains("words"),
                       Error);
}

}  // namespace dnc_babi_tests
