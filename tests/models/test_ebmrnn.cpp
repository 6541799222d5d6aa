// EBmRNN / EmRNN: the explicit memory holds exact copies of the written m_t (traceability),
// evicted content reaches the blurred memory (Eq. 12-14 recomputed from the trace and the
// parameters), sample mode makes one-hot choices, evaluation is deterministic (no Gumbel noise),
// the trace's slot bookkeeping, and config errors. The float64 gradient checks of the registered
// variants run in test_model_registry.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>

#include "engine/alloc_counter.hpp"
#include "models/clinical/ebmrnn.hpp"
#include "models/model_check.hpp"
#include "ops/ops.hpp"

namespace ebmrnn_tests {

using namespace memgrad;

namespace {

// The registered config of a variant, made for training (sample mode) with `slots` slots.
nlohmann::json config(const std::string& model, int64_t slots) {
  nlohmann::json c;
  for (const ModelInfo& m : all_models())
    if (m.name == model) c = m.check_configs.at(0);
  REQUIRE(c.is_object());
  c.erase("variant");
  c["straight_through"] = "sample";
  c["slots"] = slots;
  return c;
}

// A batch of B stays of T steps (the check batch's fields, longer).
Batch make_batch(int64_t B, int64_t T, DType dtype, uint64_t seed = 3) {
  Batch batch;
  Rng rng(seed);
  batch.field("x", Shape{B, T, 5}, dtype);
  batch.field("y", Shape{B, 1}, dtype);
  Tensor& x = batch.field("x", Shape{B, T, 5}, dtype);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, rng.normal());
  Tensor& y = batch.field("y", Shape{B, 1}, dtype);
  for (int64_t b = 0; b < B; ++b) y.set(b, double(b % 2));
  return batch;
}

// The trace's entries by name.
struct Run {
  Trace trace;
  std::map<std::string, Tensor> at;
  Tensor predictions;
  const Tensor& get(const std::string& name, int64_t t) const {
    std::string key = "t";  // not "t" + ...: g++ 12 warns (-Wrestrict) on that
    key += std::to_string(t);
    key += "/" + name;
    const auto it = at.find(key);
    REQUIRE(it != at.end());
    return it->second;
  }
};
Run run(Model& model, const Batch& batch, bool training, uint64_t seed = 5) {
  Run r;
  Tape tape(seed);
  ForwardOptions opts;
  opts.training = training;
  opts.trace = &r.trace;
  r.predictions = model.forward(tape, batch, opts).predictions.value().clone();
  for (const auto& [name, value] : r.trace.entries) r.at[name] = value;
  return r;
}

int64_t argmax_row(const Tensor& t, int64_t row, int64_t n) {
  int64_t j = 0;
  for (int64_t i = 1; i < n; ++i)
    if (t.at(row * n + i) > t.at(row * n + j)) j = i;
  return j;
}

}  // namespace

TEST_CASE("ebmrnn/emrnn: explicit slots hold exact copies of the written m_t, slot hours traced") {
  for (const char* name : {"ebmrnn", "emrnn"}) {
    CAPTURE(name);
    const int64_t B = 3, T = 9, N = 3, D = 3;
    EbmrnnModel model(name, config(name, N), DType::f32, 1);
    const Batch batch = make_batch(B, T, DType::f32);
    const Run r = run(model, batch, /*training=*/true);
    int64_t evictions = 0;
    for (int64_t t = 0; t < T; ++t) {
      const Tensor& hours = r.get("slot_hour", t);
      const Tensor& memory = r.get("explicit_memory", t);
      const Tensor& evicted = r.get("evicted", t);
      for (int64_t b = 0; b < B; ++b) {
        // While filling, slot j holds step j; then the evicted slot holds step t.
        if (t < N) {
          for (int64_t j = 0; j < N; ++j) CHECK(hours.at(b * N + j) == (j <= t ? j : -1));
        } else {
          const int64_t j = argmax_row(evicted, b, N);
          CHECK(evicted.at(b * N + j) == 1.0);
          CHECK(hours.at(b * N + j) == t);
          ++evictions;
        }
        for (int64_t j = 0; j < std::min(t + 1, N); ++j) {
          const int64_t h = int64_t(hours.at(b * N + j));
          REQUIRE(h >= 0);
          REQUIRE(h <= t);
          const Tensor& m = r.get("candidate", h);
          for (int64_t d = 0; d < D; ++d)  // bit for bit
            CHECK(memory.at((b * N + j) * D + d) == m.at(b * D + d));
        }
      }
    }
    CHECK(evictions == B * (T - N));
  }
}

TEST_CASE("ebmrnn: sample mode chooses one-hot reads and evictions; surrogate mode does not") {
  const int64_t B = 3, T = 7, N = 3, K = 2;
  for (const char* mode : {"hops", "parallel"}) {
    CAPTURE(mode);
    nlohmann::json c = config("ebmrnn", N);
    c["read_mode"] = mode;
    EbmrnnModel model("ebmrnn", c, DType::f64, 1);
    const Batch batch = make_batch(B, T, DType::f64);
    const Run r = run(model, batch, true);
    for (int64_t t = 1; t < T; ++t) {
      const Tensor& w = r.get("explicit_read_weights", t);  // [B, K, N]
      const int64_t filled = std::min(t, N);
      for (int64_t row = 0; row < B * K; ++row) {
        int ones = 0;
        for (int64_t j = 0; j < N; ++j) {
          const double v = w.at(row * N + j);
          CHECK((v == 0.0 || v == 1.0));
          if (v == 1.0) {
            ++ones;
            CHECK(j < filled);  // only filled slots are read
          }
        }
        CHECK(ones == 1);
      }
    }
    c["straight_through"] = "surrogate";
    EbmrnnModel soft("ebmrnn", c, DType::f64, 1);
    const Run soft_run = run(soft, batch, true);  // kept: w refers into it
    const Tensor& w = soft_run.get("explicit_read_weights", T - 1);
    int fractional = 0;
    for (int64_t i = 0; i < w.numel(); ++i) fractional += w.at(i) > 0 && w.at(i) < 1;
    CHECK(fractional > 0);
  }
}

TEST_CASE("ebmrnn: evicted content reaches the blurred memory (Eq. 12-14)") {
  const int64_t B = 3, T = 6, N = 2, D = 3, NB = 3;
  EbmrnnModel model("ebmrnn", config("ebmrnn", N), DType::f64, 1);
  const Batch batch = make_batch(B, T, DType::f64);
  const Run r = run(model, batch, true);
  ParameterSet& p = model.params();
  const Tensor& wf = p.get("blurred_mix_gate.w").value;  // [2D, D]
  const Tensor& bf = p.get("blurred_mix_gate.b").value;
  const Tensor& wi = p.get("blurred_mix_input.w").value;  // [D, D]
  const Tensor& we = p.get("blurred_mix_evicted.w").value;
  const Tensor& bm = p.get("blurred_mix_evicted.b").value;
  for (int64_t t = 1; t < T; ++t) {
    CAPTURE(t);
    const Tensor& m = r.get("candidate", t);
    const Tensor& popped = r.get("popped", t);
    const Tensor& cand = r.get("blurred_candidate", t);
    const Tensor& erase = r.get("erase", t);
    const Tensor& w = r.get("blurred_write_weights", t);
    const Tensor& before = r.get("blurred_memory", t - 1);
    const Tensor& after = r.get("blurred_memory", t);
    for (int64_t b = 0; b < B; ++b) {
      // m^_t: the evicted slot's previous content exactly, 0 while a slot was free.
      if (t < N) {
        for (int64_t d = 0; d < D; ++d) CHECK(popped.at(b * D + d) == 0.0);
      } else {
        const int64_t j = argmax_row(r.get("evicted", t), b, N);
        const Tensor& prev = r.get("explicit_memory", t - 1);
        double norm = 0;
        for (int64_t d = 0; d < D; ++d) {
          CHECK(popped.at(b * D + d) == prev.at((b * N + j) * D + d));
          norm += std::abs(popped.at(b * D + d));
        }
        CHECK(norm > 0);
      }
      // Eq. 13 from the parameters: m^B = ReLU((1 - f) W_i m + f W_E m^ + b_m).
      for (int64_t k = 0; k < D; ++k) {
        double gate = bf.at(k), in = 0, ev = bm.at(k);
        for (int64_t d = 0; d < D; ++d) {
          gate +=
              m.at(b * D + d) * wf.at(d * D + k) + popped.at(b * D + d) * wf.at((D + d) * D + k);
          in += m.at(b * D + d) * wi.at(d * D + k);
          ev += popped.at(b * D + d) * we.at(d * D + k);
        }
        const double f = 1 / (1 + std::exp(-gate));
        const double want = std::max(0.0, (1 - f) * in + f * (ev - bm.at(k)) + bm.at(k));
        CHECK(cand.at(b * D + k) == doctest::Approx(want).epsilon(1e-12));
      }
      // Eq. 14: B_t = B_{t-1} o (1 - w e^T) + w m^B^T.
      for (int64_t i = 0; i < NB; ++i)
        for (int64_t d = 0; d < D; ++d) {
          const double wv = w.at(b * NB + i);
          const double want = before.at((b * NB + i) * D + d) * (1 - wv * erase.at(b * D + d)) +
                              wv * cand.at(b * D + d);
          CHECK(after.at((b * NB + i) * D + d) == doctest::Approx(want).epsilon(1e-12));
        }
    }
  }
}

TEST_CASE("ebmrnn: evaluation chooses by argmax without noise; training samples") {
  const int64_t B = 4, T = 8, N = 3;
  EbmrnnModel model("ebmrnn", config("ebmrnn", N), DType::f64, 1);
  const Batch batch = make_batch(B, T, DType::f64);
  const Run a = run(model, batch, false, 5), b = run(model, batch, false, 99);
  CHECK(a.predictions.to_vector() == b.predictions.to_vector());
  for (int64_t t = 1; t < T; ++t)
    CHECK(a.get("explicit_read_weights", t).to_vector() ==
          b.get("explicit_read_weights", t).to_vector());
  // Training draws Gumbel noise (and dropout): other tape seeds, other choices somewhere.
  bool differs = false;
  const Run c = run(model, batch, true, 5), d = run(model, batch, true, 99);
  for (int64_t t = 1; t < T; ++t)
    differs |= c.get("explicit_read_weights", t).to_vector() !=
               d.get("explicit_read_weights", t).to_vector();
  CHECK(differs);
}

TEST_CASE("ebmrnn: read gates per read are traced for ebmrnn, not emrnn; emrnn has no B") {
  const Batch batch = make_batch(1, 5, DType::f32);
  EbmrnnModel eb("ebmrnn", config("ebmrnn", 2), DType::f32, 1);
  const Run r = run(eb, batch, false);
  const Tensor& g = r.get("read_gate", 4);
  CHECK(g.shape() == Shape{1, 2});
  for (double v : g.to_vector()) CHECK((v > 0 && v < 1));
  EbmrnnModel em("emrnn", config("emrnn", 2), DType::f32, 1);
  const Run s = run(em, batch, false);
  CHECK(s.at.count("t4/read_gate") == 0);
  CHECK(s.at.count("t4/blurred_memory") == 0);
  CHECK(em.params().find("read_gate.w") == nullptr);
  CHECK(eb.params().find("read_gate.w") != nullptr);
}

TEST_CASE("ebmrnn: config and batch errors name the key or field") {
  nlohmann::json c = config("ebmrnn", 2);
  c["read_mode"] = "sideways";
  CHECK_THROWS_WITH_AS(EbmrnnModel("ebmrnn", c, DType::f64, 1), doctest::Contains("read_mode"),
                       Error);
  c = config("ebmrnn", 2);
  c["temperature"] = 0.0;
  CHECK_THROWS_WITH_AS(EbmrnnModel("ebmrnn", c, DType::f64, 1), doctest::Contains("temperature"),
                       Error);
  EbmrnnModel model("ebmrnn", config("ebmrnn", 2), DType::f64, 1);
  Batch batch;
  batch.field("x", Shape{2, 3, 4}, DType::f64);  // input_size is 5
  batch.field("y", Shape{2, 1}, DType::f64);
  Tape tape;
  CHECK_THROWS_WITH_AS(model.forward(tape, batch, ForwardOptions{}), doctest::Contains("x"), Error);
}

TEST_CASE("ebmrnn/emrnn: a steady-state training step allocates nothing on the heap") {
  for (const char* name : {"ebmrnn", "emrnn"})
    for (const char* mode : {"hops", "parallel"}) {
      CAPTURE(name);
      CAPTURE(mode);
      nlohmann::json c = config(name, 3);
      c["read_mode"] = mode;
      EbmrnnModel model(name, c, DType::f32, 1);
      const Batch batch = make_batch(4, 7, DType::f32);
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
}

}  // namespace ebmrnn_tests
