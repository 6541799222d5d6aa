// The story view of the babi task (tasks/babi_story.hpp): a fixture story's exact fields and
// vocabulary, the split at story boundaries, batches bucketed by length under the token cap and a
// pure function of the step, evaluation at the slots, settings and bad input, the en-10k
// fallback to the 1k training file, and counts on the real data (tasks_shared_data).
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "tasks/babi.hpp"
#include "tasks/babi_story.hpp"
#include "tasks/task.hpp"
#include "tests/tasks/babi_fixture.hpp"
#include "tests/test_util.hpp"

using namespace memgrad;
using memgrad::test::error_of;
using memgrad::test::TempDir;
using memgrad::test::babi_fixture::kStories;
using memgrad::test::babi_fixture::write_task;
using memgrad::test::babi_fixture::write_test_only;

namespace {

std::vector<int> ints(const Tensor& t) {
  std::vector<int> out;
  for (double v : t.to_vector()) out.push_back(int(v));
  return out;
}

nlohmann::json story_settings(const TempDir& dir, nlohmann::json extra = nlohmann::json::object()) {
  nlohmann::json s = {{"data_dir", dir.path.string()}, {"babi_task", 1}, {"babi_view", "story"}};
  s.update(extra);
  return s;
}

const std::string kBabiDir = test::shared_path("data/babi");

}  // namespace

TEST_CASE("babi story view: a fixture story's exact fields, slots and vocabulary") {
  TempDir dir;
  std::string train;
  for (int i = 0; i < 10; ++i) train += kStories;  // 20 stories, 30 questions
  write_task(dir, 1, train, kStories);
  babi::LoadOptions o;
  o.data_dir = dir.path.string();
  const babi::StoryData d = babi::load_stories(o);
  // nil, the slot, then words and answers in line order.
  const char* words[] = {"<nil>",    "-",    "mary",   "moved",     "to",    "the",
                         "bathroom", "john", "went",   "hallway",   "where", "is",
                         "daniel",   "back", "sandra", "journeyed", "office"};
  REQUIRE(d.vocab.size() == 17);
  for (int i = 0; i < 17; ++i) CHECK(d.vocab.word(i) == words[i]);
  // The first 27 questions train: stories 0..17; stories 18 and 19 (3 questions) validate.
  CHECK(d.train.size() == 18);
  CHECK(d.valid.size() == 2);
  CHECK(d.test.size() == 2);
  CHECK(d.train[0].length == 24);
  CHECK(d.train[0].questions == 2);
  CHECK(d.train[1].length == 9);

  Batch b;
  const std::vector<int64_t> idx = {0, 1};
  babi::fill_story_batch(d, d.train, idx, DType::f32, b);
  CHECK(b.size == 2);
  CHECK(b.get("words").shape() == Shape{2, 24});
  std::vector<int> want_words = {2, 3, 4,  5, 6,  7, 8, 4, 5,  9,  10, 11,
                                 2, 1, 12, 8, 13, 4, 5, 9, 10, 11, 12, 1};
  const std::vector<int> story2 = {14, 15, 4, 5, 16, 10, 11, 14, 1};
  want_words.insert(want_words.end(), story2.begin(), story2.end());
  want_words.resize(48, 0);
  CHECK(ints(b.get("words")) == want_words);
  std::vector<int> mask(48, 0), slots(48, 0), answers(48, 0);
  for (int t = 0; t < 24; ++t) mask[size_t(t)] = 1;
  for (int t = 24; t < 33; ++t) mask[size_t(t)] = 1;
  slots[13] = slots[23] = slots[32] = 1;
  answers[13] = 6, answers[23] = 9, answers[32] = 16;  // bathroom, hallway, office
  CHECK(ints(b.get("words_mask")) == mask);
  CHECK(ints(b.get("answer_slots")) == slots);
  CHECK(ints(b.get("answers")) == answers);
}

TEST_CASE("babi story view: batches by length under the token cap") {
  std::vector<babi::Story> s;
  for (int64_t len : {3, 3, 3, 5, 5, 9, 20}) s.push_back({.task = 1, .length = len});
  const std::vector<int64_t> order = {0, 1, 2, 3, 4, 5, 6};
  std::vector<int64_t> starts;
  // At most 2 stories, at most 10 positions: {3,3} {3,5} {5} {9} {20 (alone, longer than the cap)}.
  babi::plan_batches(s, order, 2, 10, starts);
  CHECK(starts == std::vector<int64_t>{0, 2, 4, 5, 6, 7});
  babi::plan_batches(s, order, 8, 1000, starts);
  CHECK(starts == std::vector<int64_t>{0, 7});
}

TEST_CASE("babi story view: the task's epochs, purity, evaluation at the slots") {
  TempDir dir;
  std::string train;
  for (int i = 0; i < 10; ++i) train += kStories;
  write_task(dir, 1, train, kStories);
  auto task = create_task("babi", story_settings(dir));
  CHECK(task->model_dims() == nlohmann::json{{"vocab_size", 17}});
  // 9 stories of 9 positions and 9 of 24, 4 per batch: 4+4 short, then 1 short + 3 long, 4, 2.
  CHECK(task->steps_per_epoch(4) == 5);
  for (int epoch = 0; epoch < 2; ++epoch) {
    int slots = 0, stories = 0;
    std::multiset<int> lengths;
    for (int64_t k = 0; k < 5; ++k) {
      Batch a, b;
      task->train_batch(epoch * 5 + k, 4, DType::f32, a);
      task->train_batch(epoch * 5 + k, 4, DType::f32, b);
      for (const auto& [name, t] : a.fields()) CHECK(t.to_vector() == b.get(name).to_vector());
      for (double v : a.get("answer_slots").to_vector()) slots += int(v);
      stories += int(a.size);
    }
    CHECK(slots == 27);  // every training question once an epoch
    CHECK(stories == 18);
  }
  // The largest batch: the longest story, as many copies as the cap allows (800 / 24 -> 4).
  Batch big;
  task->largest_train_batch(4, DType::f32, big);
  CHECK(big.get("words").shape() == Shape{4, 24});

  Predictor perfect = [](const Batch& batch) {
    const Tensor& ans = batch.get("answers");
    const int64_t B = ans.dim(0), T = ans.dim(1);
    Tensor scores = Tensor::zeros(Shape{B, T, 17}, DType::f32);
    for (int64_t i = 0; i < B * T; ++i) scores.set(i * 17 + int64_t(ans.at(i)), 1.0);
    return scores;
  };
  Predictor nil = [](const Batch& batch) {
    const Tensor& w = batch.get("words");
    return Tensor::zeros(Shape{w.dim(0), w.dim(1), 17}, DType::f32);
  };
  const nlohmann::json good = task->evaluate(perfect, 4, DType::f32);
  CHECK(good.at("task_errors").at("1") == 0.0);
  CHECK(good.at("failed_tasks") == 0);
  CHECK(good.at("per_task_error") == good.at("task_errors"));
  CHECK(good.at("failed_task_ids").empty());
  CHECK(good.at("train_sets").empty());
  CHECK(good.at("test_questions").at("1") == 3);
  CHECK(good.at("valid_mean_error") == 0.0);
  const nlohmann::json bad = task->evaluate(nil, 1, DType::f32);
  CHECK(bad.at("task_errors").at("1") == 100.0);
  CHECK(bad.at("valid_task_errors").at("1") == 100.0);
  CHECK(task->format_metrics(bad).find("mean  100.0   failed 1 of 1") != std::string::npos);
  Predictor wrong_shape = [](const Batch& batch) {
    return Tensor::zeros(Shape{batch.size, 17}, DType::f32);
  };
  CHECK_THROWS_WITH_AS(task->evaluate(wrong_shape, 4, DType::f32),
                       doctest::Contains("predictions must be [2, 24, classes]"), Error);
}

TEST_CASE("babi story view: bad settings and bad files are named") {
  TempDir dir;
  std::string train;
  for (int i = 0; i < 10; ++i) train += kStories;
  write_task(dir, 1, train, kStories);
  CHECK_THROWS_WITH_AS(create_task("babi", story_settings(dir, {{"babi_view", "stories"}})),
                       doctest::Contains("or \"story\" (whole stories"), Error);
  CHECK_THROWS_WITH_AS(create_task("babi", story_settings(dir, {{"story_tokens", 0}})),
                       doctest::Contains("story_tokens must be a whole number"), Error);
  CHECK(error_of([&] {
          create_task("babi", story_settings(dir, {{"babi_task", 2}}));
        }).find("qa2_*_train.txt: no such file") != std::string::npos);
  write_task(dir, 3, "1 Mary went home.\n2 Where is Mary? home 1\n", kStories);
  CHECK(error_of([&] {
          create_task("babi", story_settings(dir, {{"babi_task", 3}}));
        }).find("qa3_test-task_train.txt:2: question without a tab-separated answer") !=
        std::string::npos);
  write_task(dir, 4, "1 Mary went home.\n", kStories);
  CHECK(error_of([&] {
          create_task("babi", story_settings(dir, {{"babi_task", 4}}));
        }).find("qa4_test-task_train.txt: no questions") != std::string::npos);
  write_task(dir, 5, "1 Mary went home.\n2 Where is Mary?\thome\t1\n", kStories);
  CHECK(error_of([&] {
          create_task("babi", story_settings(dir, {{"babi_task", 5}}));
        }).find("too few questions to train on") != std::string::npos);
}

TEST_CASE("babi story view: an en-10k task without its training file trains on the 1k file") {
  TempDir dir;
  std::string train;
  for (int i = 0; i < 10; ++i) train += kStories;
  // Task 3's test story is 19 positions long, longer than any of task 1's (24 and 9 are 1's).
  const std::string test3 =
      "1 Bill went to the garden.\n2 Bill went to the kitchen.\n3 Bill went to the office.\n"
      "4 Where is Bill?\toffice\t3\n";
  write_task(dir, 3, train, test3, "en");
  write_test_only(dir, 3, test3, "en-10k");  // the test file only, as qa3 in en-10k
  write_task(dir, 1, train, kStories, "en-10k");
  auto task =
      create_task("babi", story_settings(dir, {{"babi_task", "1,3"}, {"babi_set", "en-10k"}}));
  // Right on every story but the 19-position ones (task 3's).
  Predictor right_but_3 = [](const Batch& batch) {
    const Tensor& ans = batch.get("answers");
    const Tensor& mask = batch.get("words_mask");
    const int64_t B = ans.dim(0), T = ans.dim(1), C = 40;
    Tensor scores = Tensor::zeros(Shape{B, T, C}, DType::f32);
    for (int64_t b = 0; b < B; ++b) {
      int64_t length = 0;
      for (int64_t t = 0; t < T; ++t) length += int64_t(mask.at(b * T + t));
      if (length == 19) continue;
      for (int64_t t = 0; t < T; ++t) scores.set((b * T + t) * C + int64_t(ans.at(b * T + t)), 1);
    }
    return scores;
  };
  const nlohmann::json m = task->evaluate(right_but_3, 4, DType::f32);
  CHECK(m.at("train_sets") == nlohmann::json{{"3", "en"}});
  CHECK(m.at("task_errors").at("1") == 0.0);
  CHECK(m.at("task_errors").at("3") == 100.0);
  CHECK(m.at("mean_error") == 50.0);
  CHECK(m.at("failed_task_ids") == nlohmann::json::array({3}));
  CHECK(m.at("mean_error_complete_tasks") == 0.0);  // task 1 alone
  CHECK(m.at("failed_tasks_complete_tasks") == 0);
  CHECK(task->format_metrics(m).find("100.0  failed  (trained on the 1k file)") !=
        std::string::npos);
  // In en, a missing training file stays an error.
  CHECK(error_of([&] {
          create_task("babi", story_settings(dir, {{"babi_task", 4}}));
        }).find("qa4_*_train.txt: no such file") != std::string::npos);
  // In en-10k, so does any missing training file but task 3's (as babi::load rules).
  write_test_only(dir, 4, kStories, "en-10k");
  write_task(dir, 4, train, kStories, "en");
  CHECK(error_of([&] {
          create_task("babi", story_settings(dir, {{"babi_task", 4}, {"babi_set", "en-10k"}}));
        }).find("qa4_*_train.txt: no such file") != std::string::npos);
}

TEST_CASE("babi story view: counts of the real en-10k data" *
          doctest::test_suite(test::kSharedData)) {
  if (!test::shared_data_present(kBabiDir)) return;
  babi::LoadOptions o;
  o.data_dir = kBabiDir;
  o.set = "en-10k";
  o.tasks = babi::parse_task_list("1,2,4-20");
  const babi::StoryData d = babi::load_stories(o);
  int64_t stories = 0, positions = 0, questions = 0, longest = 0;
  for (const auto* set : {&d.train, &d.valid})
    for (const babi::Story& s : *set) {
      ++stories;
      positions += s.length;
      questions += s.questions;
      longest = std::max(longest, s.length);
    }
  // ../shared/design/wave2-notes/P1-babi-baselines.md 2.1: 190,000 training questions in 60,661
  // stories. Its 4.74 M tokens an epoch count '.' and '?' as tokens too (one a statement, 0.535 M
  // statements, and one a question); our tokens drop punctuation (babi::tokenize):
  // 4.74 M - 0.535 M - 0.19 M = 4.02 M.
  CHECK(questions == 190000);
  CHECK(stories == 60661);
  CHECK(positions == 4031098);
  CHECK(double(positions) == doctest::Approx(4.74e6 - 0.535e6 - 0.19e6).epsilon(0.005));
  CHECK(d.train_from_en.empty());
  MESSAGE("en-10k without qa3: ", stories, " stories, ", positions, " positions, longest ",
          longest);
}
