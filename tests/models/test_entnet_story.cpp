// EntNet's per-story mode (config per_story, fed by the babi task's memory-story view): the same
// scores as per-question mode for every question, padded stories and question lists masked, and
// the batch and epoch sizes of the view. Its float64 gradient check is the registry's
// "entnet/per-story" variant (test_model_registry).
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "models/qa/entnet.hpp"
#include "tasks/babi_memory_story.hpp"
#include "tests/tasks/babi_story_fixture.hpp"

using namespace memgrad;
using babi::Split;

namespace {

babi::Data load_stories(const std::string& dir, int memory_size) {
  babi::LoadOptions o;
  o.data_dir = dir;
  o.set = "en";
  o.tasks = {1};
  o.memory_size = memory_size;
  return babi::load(o);
}

nlohmann::json small_config(const babi::View& view) {
  nlohmann::json c = {
      {"embedding_dim", 6}, {"memory_slots", 3}, {"init_std", 0.3}, {"prelu_init", 0.25}};
  const nlohmann::json dims = view.model_dims();
  for (auto it = dims.begin(); it != dims.end(); ++it) c[it.key()] = *it;
  return c;
}

// Every test question's scores, by its index in Data::test.
std::vector<std::vector<double>> question_scores(EntNet& model, const babi::View& view, bool story,
                                                 const babi::Data& data, int64_t per_batch) {
  std::vector<std::vector<double>> out(data.test.size());
  const auto samples = babi::story_samples(data.test);
  const int64_t n = view.samples(Split::test);
  for (int64_t start = 0; start < n; start += per_batch) {
    std::vector<int64_t> idx;
    for (int64_t i = start; i < std::min(n, start + per_batch); ++i) idx.push_back(i);
    Batch batch;
    view.fill(Split::test, idx, nullptr, DType::f64, batch);
    Tape tape;
    const Tensor p = model.forward(tape, batch, ForwardOptions{}).predictions.value().clone();
    const int64_t classes = p.dim(p.rank() - 1);
    for (size_t i = 0; i < idx.size(); ++i) {
      const int64_t q = story ? p.dim(1) : 1;
      const int64_t first = story ? samples[size_t(idx[i])].question : idx[i];
      const int64_t count = story ? samples[size_t(idx[i])].questions : 1;
      for (int64_t k = 0; k < count; ++k) {
        std::vector<double>& s = out[size_t(first + k)];
        CHECK(s.empty());  // each question answered once
        for (int64_t c = 0; c < classes; ++c) s.push_back(p.at((int64_t(i) * q + k) * classes + c));
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("entnet per story: the same scores as per question for every question (float64)") {
  test::TempDir dir;
  const std::string data_dir = test::write_babi_stories(dir, 30, 25, 14);
  // 70: every story fits the window, one sample per story; 5: longer prefixes take the window.
  for (const int memory_size : {70, 5}) {
    CAPTURE(memory_size);
    const babi::Data data = load_stories(data_dir, memory_size);
    const babi::MemoryView questions(data, 0.1);
    const babi::MemoryStoryView stories(data);
    if (memory_size == 70) CHECK(stories.samples(Split::test) == 25);
    CHECK(stories.samples(Split::test) < int64_t(data.test.size()));
    EntNet per_question(small_config(questions), DType::f64, 9);
    EntNet per_story(small_config(stories), DType::f64, 9);
    REQUIRE(per_story.config().at("per_story") == true);
    const auto a = question_scores(per_question, questions, false, data, 7);
    const auto b = question_scores(per_story, stories, true, data, 4);
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      CAPTURE(i);
      REQUIRE(a[i].size() == b[i].size());
      REQUIRE(!a[i].empty());
      for (size_t c = 0; c < a[i].size(); ++c)
        CHECK(std::abs(a[i][c] - b[i][c]) <= 1e-12 * (1 + std::abs(a[i][c])));
    }
    // And the same per-task counts through the views' scoring.
    auto counts = [&](EntNet& model, const babi::View& view) {
      babi::TaskCounts out;
      std::vector<int64_t> idx;
      for (int64_t i = 0; i < view.samples(Split::test); ++i) idx.push_back(i);
      Batch batch;
      view.fill(Split::test, idx, nullptr, DType::f64, batch);
      Tape tape;
      view.score(Split::test, idx, model.forward(tape, batch, ForwardOptions{}).predictions.value(),
                 out, nullptr);
      return out;
    };
    const babi::TaskCounts ca = counts(per_question, questions), cb = counts(per_story, stories);
    CHECK(ca.at(1).total == int64_t(data.test.size()));
    CHECK(ca.at(1).total == cb.at(1).total);
    CHECK(ca.at(1).correct == cb.at(1).correct);
  }
}

TEST_CASE("entnet per story: padded stories and questions change neither the loss nor a gradient") {
  test::TempDir dir;
  const babi::Data data = load_stories(test::write_babi_stories(dir, 30, 10, 14), 70);
  const babi::MemoryStoryView view(data);
  EntNet model(small_config(view), DType::f64, 4);
  // Loss and gradients of the samples `idx` in one batch.
  auto run = [&](std::vector<int64_t> idx) {
    Batch batch;
    view.fill(Split::train, idx, nullptr, DType::f64, batch);
    model.params().zero_grad();
    Tape tape;
    const ForwardResult r = model.forward(tape, batch, ForwardOptions{});
    tape.backward(r.loss);
    std::vector<double> all = r.loss.value().to_vector();
    for (size_t i = 0; i < model.params().size(); ++i)
      for (double g : model.params()[i].grad.to_vector()) all.push_back(g);
    return all;
  };
  // Samples of different lengths and question counts.
  const auto samples = babi::story_samples(data.train);
  const std::vector<int64_t> idx = {0, 1, 2};
  CHECK(samples[0].length != samples[1].length);
  CHECK(samples[0].questions != samples[2].questions);
  const std::vector<double> together = run(idx);
  std::vector<double> apart(together.size(), 0.0);
  for (int64_t i : idx) {
    const std::vector<double> one = run({i});
    REQUIRE(one.size() == apart.size());
    for (size_t k = 0; k < one.size(); ++k) apart[k] += one[k];  // the "sum" loss adds up
  }
  for (size_t k = 0; k < together.size(); ++k)
    CHECK(together[k] == doctest::Approx(apart[k]).epsilon(1e-12));
}

TEST_CASE("babi memory-story view: every question once, positions, batch and epoch sizes") {
  test::TempDir dir;
  const babi::Data data = load_stories(test::write_babi_stories(dir, 30, 10, 14), 5);
  const babi::MemoryStoryView view(data);
  CHECK(view.model_dims().at("per_story") == true);
  CHECK(view.questions(Split::train) == int64_t(data.train.size()));
  const auto samples = babi::story_samples(data.train);
  CHECK(view.samples(Split::train) == int64_t(samples.size()));
  int64_t next = 0;
  for (const babi::StorySample& s : samples) {
    CHECK(s.question == next);  // in order, each question once
    next += s.questions;
    CHECK(s.length <= 5);
    const babi::Example& last = data.train[size_t(s.question + s.questions - 1)];
    CHECK(s.first + s.length == last.first + last.count);  // ends at its last question
    if (s.questions > 1) CHECK(s.first == last.story_first);
  }
  CHECK(next == int64_t(data.train.size()));
  // About batch questions a batch: batch x samples / questions stories, at least 1.
  const double ratio = double(samples.size()) / double(data.train.size());
  CHECK(view.samples_per_batch(32) == std::llround(32 * ratio));
  CHECK(view.samples_per_batch(1) == 1);
  // The largest batch holds the longest sample and the one with the most questions.
  std::vector<int64_t> idx;
  view.largest_train_indices(3, idx);
  REQUIRE(idx.size() == 3);
  int64_t longest = 0, most = 0;
  for (const auto& s : samples) {
    longest = std::max<int64_t>(longest, s.length);
    most = std::max<int64_t>(most, s.questions);
  }
  CHECK(samples[size_t(idx[0])].length == longest);
  CHECK(samples[size_t(idx[1])].questions == most);
}

TEST_CASE("entnet per story: the trace's attention is [B, Q, K], a question x slot map") {
  test::TempDir dir;
  const babi::Data data = load_stories(test::write_babi_stories(dir, 30, 10, 14), 70);
  const babi::MemoryStoryView view(data);
  EntNet model(small_config(view), DType::f64, 4);
  Batch batch;
  const std::vector<int64_t> idx = {2};  // 11 sentences, 4 questions
  view.fill(Split::train, idx, nullptr, DType::f64, batch);
  const int64_t q = batch.get("questions").dim(1), m = batch.get("story").dim(1);
  CHECK(q == 4);
  CHECK(m == 11);
  Trace trace;
  ForwardOptions opts;
  opts.trace = &trace;
  Tape tape;
  model.forward(tape, batch, opts);
  REQUIRE(trace.entries.size() == size_t(m + 1));
  const Tensor& p = trace.entries.back().second;
  CHECK(trace.entries.back().first == "attention");
  CHECK(p.shape() == Shape{1, q, 3});
  for (int64_t k = 0; k < q; ++k) {
    double sum = 0;
    for (int64_t j = 0; j < 3; ++j) sum += p.at(k * 3 + j);
    CHECK(sum == doctest::Approx(1.0));
  }
}

TEST_CASE("entnet per story: batch errors name the field or the view") {
  test::TempDir dir;
  const babi::Data data = load_stories(test::write_babi_stories(dir, 30, 10, 14), 70);
  const babi::MemoryStoryView stories(data);
  const babi::MemoryView questions(data, 0.1);
  EntNet model(small_config(stories), DType::f64, 4);
  auto run = [&](const Batch& batch) {
    Tape tape;
    model.forward(tape, batch, ForwardOptions{});
  };
  const std::vector<int64_t> idx = {1, 2};
  Batch per_question;
  questions.fill(Split::train, idx, nullptr, DType::f64, per_question);
  CHECK_THROWS_WITH_AS(run(per_question), doctest::Contains("--babi-view memory-story"), Error);
  auto fresh = [&] {
    Batch b;
    stories.fill(Split::train, idx, nullptr, DType::f64, b);
    return b;
  };
  Batch late = fresh();  // a question after more sentences than the batch has
  const_cast<Tensor&>(late.get("question_at")).set(0, double(late.get("story").dim(1) + 1));
  CHECK_THROWS_WITH_AS(run(late), doctest::Contains("'question_at' holds"), Error);
  Batch word = fresh();  // an answer outside the vocabulary
  const_cast<Tensor&>(word.get("answers")).set(0, 1e6);
  CHECK_THROWS_WITH_AS(run(word), doctest::Contains("'answers' holds"), Error);
  const Batch batch = fresh();
  run(batch);  // the batch itself is fine
}
