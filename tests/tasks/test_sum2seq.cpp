#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "engine/error.hpp"
#include "tasks/sum2seq.hpp"
#include "tasks/task.hpp"

using namespace memgrad;

TEST_CASE("sum2seq samples follow y_i = x1_i + x2_{L+1-i} with masked padding") {
  for (const bool end_marker : {false, true}) {
    CAPTURE(end_marker);
    Batch b;
    Rng rng(3);
    sum2seq::make_batch(rng, 64, {.lmax = 10, .end_marker = end_marker}, DType::f64, b);
    const Tensor &x1 = b.get("x1"), &x2 = b.get("x2"), &y = b.get("y"), &ym = b.get("y_mask");
    const int64_t width = y.dim(1), view_width = x1.dim(1);
    CHECK(view_width == width + (end_marker ? 1 : 0));
    bool saw_short = false, saw_long = false;
    for (int64_t s = 0; s < 64; ++s) {
      int64_t len = 0;
      while (len < width && ym.at(s * width + len) != 0) ++len;
      CHECK(len >= 1);
      CHECK(len <= 10);
      saw_short |= len <= 2;
      saw_long |= len >= 9;
      for (int64_t i = 0; i < width; ++i) {
        const int64_t at = s * width + i, v = s * view_width + i;
        if (i < len) {
          CHECK(x1.at(v) >= 1);
          CHECK(x1.at(v) <= 50);
          CHECK(y.at(at) == x1.at(v) + x2.at(s * view_width + (len - 1 - i)));
          CHECK(b.get("x1_mask").at(v) == 1);
        } else {
          CHECK(y.at(at) == 0);
          CHECK(ym.at(at) == 0);
        }
      }
      for (int64_t i = len; i < view_width; ++i) {  // the end marker, then padding
        const int64_t v = s * view_width + i;
        const bool marker = end_marker && i == len;
        CHECK(x1.at(v) == (marker ? sum2seq::kEndToken : 0));
        CHECK(x2.at(v) == (marker ? sum2seq::kEndToken : 0));
        CHECK(b.get("x2_mask").at(v) == (marker ? 1 : 0));
      }
    }
    CHECK(saw_short);
    CHECK(saw_long);
  }
}

TEST_CASE("training batches are a pure function of (seed, step)") {
  Batch a, b, c;
  sum2seq::train_batch(1, 17, 8, {}, DType::f32, a);
  sum2seq::train_batch(1, 17, 8, {}, DType::f32, b);
  sum2seq::train_batch(1, 18, 8, {}, DType::f32, c);
  CHECK(a.get("x1").to_vector() == b.get("x1").to_vector());
  CHECK(a.get("x1").to_vector() != c.get("x1").to_vector());
}

TEST_CASE("one_length_per_batch: every training sample of a batch has the batch's length") {
  const sum2seq::Format f{.lmax = 10, .end_marker = true, .one_length_per_batch = true};
  std::vector<int64_t> batch_lengths;
  for (int64_t step = 0; step < 20; ++step) {
    Batch b;
    sum2seq::train_batch(1, step, 16, f, DType::f32, b);
    const Tensor& ym = b.get("y_mask");
    const int64_t width = ym.dim(1);
    for (int64_t s = 0; s < 16; ++s) {
      int64_t len = 0;
      while (len < width && ym.at(s * width + len) != 0) ++len;
      CHECK(len == width);  // every sample fills the batch's width
    }
    batch_lengths.push_back(width);
  }
  // The length still varies from batch to batch.
  CHECK(*std::min_element(batch_lengths.begin(), batch_lengths.end()) <
        *std::max_element(batch_lengths.begin(), batch_lengths.end()));
  // Test sets draw a length per sample whatever the setting.
  Batch t;
  sum2seq::test_batch(2024, f, 64, DType::f32, t);
  const Tensor& ym = t.get("y_mask");
  int64_t short_samples = 0;
  for (int64_t s = 0; s < 64; ++s) short_samples += ym.at(s * ym.dim(1) + ym.dim(1) - 1) == 0;
  CHECK(short_samples > 0);
}

TEST_CASE("padded positions never change the sum2seq metric") {
  auto task = create_task(
      "sum2seq",
      {{"seed", 1}, {"test_seed", 9}, {"lmax", 10}, {"test_lmax", {6}}, {"test_samples", 40}});
  // A predictor that is right on every real position and says `pad_guess` on padding.
  auto oracle = [](double pad_guess) {
    return [pad_guess](const Batch& b) {
      const Tensor &y = b.get("y"), &m = b.get("y_mask");
      Tensor scores = Tensor::zeros(Shape{y.dim(0), y.dim(1), sum2seq::kOutputVocab}, DType::f32);
      for (int64_t i = 0; i < y.numel(); ++i) {
        const int64_t cls = m.at(i) != 0 ? int64_t(y.at(i)) : int64_t(pad_guess);
        scores.set(i * sum2seq::kOutputVocab + cls, 1.0);
      }
      return scores;
    };
  };
  const auto a = task->evaluate(oracle(0), 7, DType::f32);
  const auto b = task->evaluate(oracle(57), 7, DType::f32);
  CHECK(a["accuracy"]["6"].get<double>() == 1.0);
  CHECK(a == b);
  // And a wrong real position does count: one token wrong in 40 samples lowers accuracy.
  auto one_wrong = [&](const Batch& batch) {
    Tensor s = oracle(0)(batch);
    s.set(0, 5.0);  // sample 0, position 0: class 0 now wins over the target
    return s;
  };
  CHECK(task->evaluate(one_wrong, 40, DType::f32)["accuracy"]["6"].get<double>() < 1.0);
}

TEST_CASE("sum2seq single samples: a test sample, one written as text, described with a guess") {
  auto task = create_task("sum2seq", {{"seed", 1},
                                      {"test_seed", 7},
                                      {"lmax", 4},
                                      {"end_marker", true},
                                      {"one_length_per_batch", false},
                                      {"test_lmax", {3, 5}},
                                      {"test_samples", 6}});
  REQUIRE(task->test_examples() == 12);
  // Sample 8 is sample 2 of the Lmax-5 test set, trimmed to its own length.
  Batch all, one;
  sum2seq::test_batch(7, {.lmax = 5, .end_marker = true}, 6, DType::f64, all);
  task->test_example(8, DType::f64, one);
  CHECK(one.size == 1);
  const int64_t len = one.get("y").dim(1), width = all.get("y").dim(1);
  for (int64_t i = 0; i < width; ++i)
    CHECK(all.get("y").at(2 * width + i) == (i < len ? one.get("y").at(i) : 0.0));
  CHECK_THROWS_WITH_AS(task->test_example(12, DType::f64, one),
                       doctest::Contains("test sample 12 out of range (12 samples"), Error);

  task->text_example("3 1 4 / 1,5,9", DType::f64, one);
  CHECK(one.get("x1").to_vector() == std::vector<double>{3, 1, 4, sum2seq::kEndToken});
  CHECK(one.get("x2").to_vector() == std::vector<double>{1, 5, 9, sum2seq::kEndToken});
  CHECK(one.get("y").to_vector() == std::vector<double>{12, 6, 5});
  CHECK(one.get("y_mask").to_vector() == std::vector<double>{1, 1, 1});
  // Scores that put the right class first at positions 0 and 2 only.
  Tensor scores = Tensor::zeros(Shape{1, 3, sum2seq::kOutputVocab}, DType::f64);
  scores.set(0 * sum2seq::kOutputVocab + 12, 1.0);
  scores.set(1 * sum2seq::kOutputVocab + 7, 1.0);
  scores.set(2 * sum2seq::kOutputVocab + 5, 1.0);
  const Task::Lines lines = task->describe_example(one, scores);
  REQUIRE(lines.size() == 5);
  CHECK(lines[0] == std::pair<std::string, std::string>{"x1", "3 1 4"});
  CHECK(lines[1] == std::pair<std::string, std::string>{"x2", "1 5 9"});
  CHECK(lines[2].second.rfind("12 6 5", 0) == 0);
  CHECK(lines[3] == std::pair<std::string, std::string>{"predicted", "12 7 5"});
  CHECK(lines[4] == std::pair<std::string, std::string>{"correct", "2 of 3"});

  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"1 2 / 3", "the same length L >= 1, got 2 and 1"},
           {"1 x / 2 3", "'x' is not a number in [1, 50]"},
           {"1 51 / 2 3", "'51' is not a number in [1, 50]"},
           {"1 2 3", "needs two views separated by '/'"},
           {"1 / 2 / 3", "more than two views"},
           {" / ", "the same length L >= 1, got 0 and 0"}}) {
    CAPTURE(text);
    CHECK_THROWS_WITH_AS(task->text_example(text, DType::f64, one),
                         doctest::Contains(message.c_str()), Error);
  }
}
