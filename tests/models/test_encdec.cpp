// EncDec (the LSTM encoder-decoder bAbI baseline): shapes, each sample read up to its own last
// token (padding changes nothing), packed and unpacked rows agree, determinism, bad batches. Its
// float64 gradient checks are test_model_registry's, as every model's; the overfit test trains it
// through `memgrad train` (tests/tools/test_babi_runs.cpp).
#include <doctest/doctest.h>

#include <memory>

#include "models/qa/encdec.hpp"
#include "ops/ops.hpp"
#include "tests/test_util.hpp"

namespace encdec_tests {

using namespace memgrad;

namespace {

const ModelInfo& info() {
  for (const ModelInfo& m : all_models())
    if (m.name == "encdec") return m;
  FAIL("encdec is not registered");
  throw 0;
}

nlohmann::json tiny(bool pack = true) {
  nlohmann::json c = info().check_configs.at(0);
  c.erase("variant");
  c["pack_rows"] = pack;
  return c;
}

Batch check_batch(DType dtype = DType::f64) {
  Batch batch;
  Rng rng(11);
  info().check_batch(rng, dtype, batch);
  return batch;
}

struct Out {
  std::vector<double> loss, logits;
};
Out run(Model& model, const Batch& batch) {
  Tape tape(3);
  ForwardResult r = model.forward(tape, batch, ForwardOptions{});
  return {r.loss.value().to_vector(), r.predictions.value().to_vector()};
}

void check_close(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-12));
}

// `in` with `extra` more padding columns (words 0, mask 0) on every row.
Batch padded(const Batch& in, int64_t extra) {
  Batch out;
  const Tensor& w = in.get("words");
  const int64_t b = w.dim(0), t = w.dim(1);
  Tensor& words = out.field("words", Shape{b, t + extra}, w.dtype());
  Tensor& mask = out.field("words_mask", Shape{b, t + extra}, w.dtype());
  for (int64_t s = 0; s < b; ++s)
    for (int64_t k = 0; k < t; ++k) {
      words.set(s * (t + extra) + k, w.at(s * t + k));
      mask.set(s * (t + extra) + k, in.get("words_mask").at(s * t + k));
    }
  out.field("answer", in.get("answer").shape(), w.dtype()).copy_from(in.get("answer"));
  out.size = in.size;
  return out;
}

}  // namespace

TEST_CASE("encdec: shapes, a mean loss, and padding that changes nothing") {
  EncDec model(tiny(), DType::f64, 7);
  const Batch batch = check_batch();
  Tape tape;
  ForwardResult r = model.forward(tape, batch, ForwardOptions{});
  CHECK(r.predictions.shape() == Shape{3, 7});  // [B, vocab]
  CHECK(r.loss.shape() == Shape{1});
  const Out a = run(model, batch), b = run(model, padded(batch, 3));
  check_close(b.logits, a.logits);
  CHECK(a.loss[0] == doctest::Approx(b.loss[0]).epsilon(1e-12));
}

TEST_CASE("encdec: packed rows and every row stepped give the same values") {
  EncDec packed(tiny(true), DType::f64, 7), full(tiny(false), DType::f64, 7);
  const Batch batch = check_batch();
  const Out a = run(packed, batch), b = run(full, batch);
  check_close(a.logits, b.logits);
  CHECK(a.loss[0] == doctest::Approx(b.loss[0]).epsilon(1e-12));
}

TEST_CASE("encdec: the same seed gives the same model and loss; another seed another") {
  const Batch batch = check_batch(DType::f32);
  EncDec a(tiny(), DType::f32, 5), b(tiny(), DType::f32, 5), c(tiny(), DType::f32, 6);
  CHECK(run(a, batch).loss == run(b, batch).loss);
  CHECK(run(a, batch).logits == run(b, batch).logits);
  CHECK(run(a, batch).loss != run(c, batch).loss);
}

TEST_CASE("encdec: bad configs and batches are named") {
  nlohmann::json bad = tiny();
  bad["hidden"] = 0;
  CHECK_THROWS_WITH_AS(EncDec(bad, DType::f64, 1), doctest::Contains("hidden"), Error);
  EncDec model(tiny(), DType::f64, 7);
  Batch batch = check_batch();
  batch.field("words_mask", Shape{3, 4}, DType::f64);
  Tape tape;
  CHECK_THROWS_WITH_AS(model.forward(tape, batch, ForwardOptions{}),
                       doctest::Contains("words_mask"), Error);
  Batch memory;  // the memory view's fields: encdec needs the words view
  memory.field("story", Shape{1, 1, 1}, DType::f64);
  memory.size = 1;
  CHECK_THROWS_WITH_AS(model.forward(tape, memory, ForwardOptions{}), doctest::Contains("words"),
                       Error);
}

}  // namespace encdec_tests
