// Task codiesp-kb on a tiny CodiEsp folder and the fixture knowledge base: the batch fields the
// knowledge-base models read (notes' word counts, one page per label), and metrics.json's keys.
#include <doctest/doctest.h>

#include "engine/error.hpp"
#include "tasks/codiesp.hpp"
#include "tasks/task.hpp"
#include "tests/tasks/kb_fixture.hpp"
#include "tests/test_util.hpp"

using namespace memgrad;

namespace {

std::unique_ptr<Task> make(const test::KbFixture& fx, const std::string& variant) {
  return create_task("codiesp-kb", {{"data_dir", (fx.dir.path / "notes").string()},
                                    {"kb_dir", (fx.dir.path / "kb").string()},
                                    {"icd_dir", (fx.dir.path / "icd").string()},
                                    {"titles", ""},
                                    {"top_k", 3},
                                    {"min_count", 1},
                                    {"kb_variant", variant}});
}

}  // namespace

TEST_CASE("codiesp-kb: note counts, one page per label, metrics with the coverage") {
  const test::KbFixture fx;
  test::write_kb_notes(fx.dir);
  const std::unique_ptr<Task> task = make(fx, "k2");
  const nlohmann::json dims = task->model_dims();
  const int64_t V = dims.at("vocab_size").get<int64_t>(), L = dims.at("labels").get<int64_t>();
  CHECK(L == 3);

  Batch batch;
  task->train_batch(0, 2, DType::f64, batch);
  const Tensor& note = batch.get("note");
  const Tensor& tokens = batch.get("tokens");
  REQUIRE(note.shape() == Shape{2, V});
  // Each note's counts are its tokens but <pad> and <unk>.
  for (int64_t b = 0; b < 2; ++b) {
    double words = 0, counted = 0;
    for (int64_t t = 0; t < tokens.dim(1); ++t)
      words += batch.get("tokens_mask").at(b * tokens.dim(1) + t) != 0 &&
               tokens.at(b * tokens.dim(1) + t) > 1;
    for (int64_t v = 0; v < V; ++v) counted += note.at(b * V + v);
    CHECK(counted == words);
    CHECK(counted > 0);
  }
  const Tensor& keys = batch.get("kb_keys");
  const Tensor& values = batch.get("kb_values");
  REQUIRE(keys.shape() == Shape{L, V});
  REQUIRE(values.shape() == Shape{L, V});
  // Every page has words of the notes' vocabulary (K52.9's names "inflammation", "stomach",
  // "intestines"; A08.4's "viral", "stomach"; R50.9's title "fever").
  for (int64_t l = 0; l < L; ++l) {
    double n = 0;
    for (int64_t v = 0; v < V; ++v) n += keys.at(l * V + v);
    CHECK(n > 0);
  }

  // A predictor of zeros: the metrics' keys, and the coverage of the label set.
  const Predictor zeros = [&](const Batch& b) {
    CHECK(b.has("kb_keys"));  // evaluation batches carry the pages too
    return Tensor::zeros(Shape{b.size, L}, DType::f64);
  };
  const nlohmann::json m = task->evaluate(zeros, 2, DType::f64);
  for (const char* k : {"auc_macro", "auc_micro", "p_at_5", "hamming_loss"}) CHECK(m.contains(k));
  CHECK(m.at("kb_coverage").at("labels") == 3);
  CHECK(m.at("kb_coverage").at("with_ontology_term") == 2);  // K52.9 and A08.4
  CHECK(m.at("kb_coverage").at("variant") == "k2");

  CHECK_THROWS_WITH_AS(make(fx, "k9"), "kb variant must be paper, k1, k2, k3 or none, got 'k9'",
                       Error);
}
