// What the bAbI models share (models/qa/): the position encoding, in its matrix form and as the
// factors alpha_k beta_j that MemN2N folds into its bag-of-words counts, and the gradient-check
// batch with the config sizes that match it.
#include <doctest/doctest.h>

#include <array>
#include <string>

#include "models/qa/babi_check.hpp"
#include "models/qa/position_encoding.hpp"

using namespace memgrad;

TEST_CASE("qa::position_encoding follows the official formula") {
  // d = 20, J' = 7 (six words and the time word).
  const Tensor l = qa::position_encoding(7, 7, 20, DType::f64);
  REQUIRE(l.shape() == Shape{7, 20});
  for (int j = 1; j <= 7; ++j)
    for (int k = 1; k <= 20; ++k) {
      const double want = 1 + 4.0 * (k - 10.5) * (j - 4.0) / (20.0 * 7.0);
      CHECK(l.at((j - 1) * 20 + (k - 1)) == doctest::Approx(want).epsilon(1e-15));
      // The factors give the same matrix up to rounding.
      const double factored = 1 + qa::position_alpha(k, 20, 7) * qa::position_beta(j, 7);
      CHECK(factored == doctest::Approx(want).epsilon(1e-15));
    }
  CHECK(l.at(0) == doctest::Approx(1 + 4 * 9.5 * 3 / 140.0));  // j = 1, k = 1: 1.8142857
  CHECK(l.at(3 * 20 + 5) == 1.0);                              // the middle word: all ones
  CHECK(qa::position_beta(4, 7) == 0.0);
  // The question's rows are the first J rows of the same matrix.
  const Tensor q = qa::position_encoding(6, 7, 20, DType::f64);
  for (int64_t i = 0; i < q.numel(); ++i) CHECK(q.at(i) == l.at(i));
  // float32 holds the same numbers rounded.
  const Tensor l32 = qa::position_encoding(7, 7, 20, DType::f32);
  for (int64_t i = 0; i < l.numel(); ++i) CHECK(l32.at(i) == double(float(l.at(i))));
}

TEST_CASE("qa::position_encoding rejects sizes it cannot build") {
  for (const auto& [positions, total, dim] :
       {std::array<int64_t, 3>{0, 7, 20}, {8, 7, 20}, {3, 7, 0}})
    CHECK_THROWS_WITH_AS(qa::position_encoding(positions, total, dim, DType::f64),
                         doctest::Contains("position encoding of"), Error);
}

TEST_CASE("qa::make_babi_check_batch: the babi task's fields at the sizes of babi_check_dims") {
  const nlohmann::json dims = qa::babi_check_dims();
  CHECK(dims == nlohmann::json{{"vocab_size", 7}, {"sentence_len", 3}, {"memory_size", 4}});
  const int64_t B = qa::kCheckQuestions, M = qa::kCheckMemories, J = qa::kCheckWords;
  const int64_t V = qa::kCheckVocab, S = qa::kCheckMemorySize;
  CHECK(dims["vocab_size"] == V);
  CHECK(dims["sentence_len"] == J);
  CHECK(dims["memory_size"] == S);
  for (DType dtype : {DType::f64, DType::f32}) {
    Batch batch;
    Rng rng(11);
    qa::make_babi_check_batch(rng, dtype, batch);
    CHECK(batch.size == B);
    const Tensor &story = batch.get("story"), &time = batch.get("time"),
                 &mask = batch.get("memory_mask"), &query = batch.get("query"),
                 &answer = batch.get("answer");
    CHECK(story.shape() == Shape{B, M, J});
    CHECK(time.shape() == Shape{B, M});
    CHECK(mask.shape() == Shape{B, M});
    CHECK(query.shape() == Shape{B, J});
    CHECK(answer.shape() == Shape{B});
    for (const Tensor* t : {&story, &time, &mask, &query, &answer}) CHECK(t->dtype() == dtype);
    // Memories 4, 2 and 3: a slot is real exactly when it has a temporal index, and a real slot
    // starts with a word; empty slots are all nil.
    const int64_t want_memories[3] = {4, 2, 3};
    for (int64_t s = 0; s < B; ++s) {
      int64_t memories = 0;
      for (int64_t i = 0; i < M; ++i) {
        const bool real = mask.at(s * M + i) == 1;
        memories += real ? 1 : 0;
        CHECK((time.at(s * M + i) > 0) == real);
        CHECK(time.at(s * M + i) <= double(S));
        CHECK((story.at((s * M + i) * J) != 0) == real);
        for (int64_t w = 0; w < J; ++w) {
          const double id = story.at((s * M + i) * J + w);
          CHECK((id >= 0 && id < double(V)));
        }
      }
      CHECK(memories == want_memories[s]);
      CHECK((answer.at(s) >= 1 && answer.at(s) < double(V)));
    }
    CHECK(time.at(2 * M + 1) == 2);  // sample 3's indices 4, 2, 1: a gap, as random noise makes
    CHECK(query.at(1 * J + J - 1) == 0);  // sample 2's question ends in a nil word
  }
}
