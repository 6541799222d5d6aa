// The babi task's views (babi_view: memory, words), epoch selection, the names the issue asks of
// the test metrics (per_task_error, failed_tasks, failed_task_ids), and en-10k's missing task 3
// training file (trained on en's, said in train_sets), on small files written here.
#include <doctest/doctest.h>

#include <string>

#include "tasks/babi.hpp"
#include "tasks/babi_view.hpp"
#include "tasks/task.hpp"
#include "tests/test_util.hpp"

using namespace memgrad;
using memgrad::test::error_of;
using memgrad::test::TempDir;

namespace {

// Two stories, three questions; the second question's window holds three statements.
const char* kTwoStories =
    "1 Mary went to the kitchen.\n"
    "2 Where is Mary?\tkitchen\t1\n"
    "3 John moved to the garden.\n"
    "4 Mary went to the office.\n"
    "5 Where is John?\tgarden\t3\n"
    "1 Sandra went home.\n"
    "2 Where is Sandra?\thome\t1\n";

void write(const TempDir& dir, const std::string& set, int task, const std::string& split,
           const std::string& text) {
  dir.write(std::string(babi::kDataFolder) + "/" + set + "/qa" + std::to_string(task) +
                "_fixture_" + split + ".txt",
            text);
}

std::string repeat(const char* text, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += text;
  return out;
}

// The words of row r of a words-view batch, as ids (up to the mask's end).
std::vector<int> row_ids(const Batch& batch, int64_t r) {
  const Tensor& w = batch.get("words");
  const Tensor& m = batch.get("words_mask");
  std::vector<int> ids;
  for (int64_t k = 0; k < w.dim(1); ++k)
    if (m.at(r * w.dim(1) + k) != 0) ids.push_back(int(w.at(r * w.dim(1) + k)));
  return ids;
}

}  // namespace

TEST_CASE("babi words view: one sequence per question, story words then question words") {
  TempDir dir;
  write(dir, "en", 1, "train", repeat(kTwoStories, 10));  // 30 questions: 27 train, 3 valid
  write(dir, "en", 1, "test", kTwoStories);
  auto task = create_task(
      "babi", {{"data_dir", dir.path.string()}, {"babi_task", 1}, {"babi_view", "words"}});
  const nlohmann::json dims = task->model_dims();
  CHECK(dims.size() == 1);  // vocab_size only
  CHECK(dims.at("vocab_size").get<int>() >= 14);
  CHECK(task->steps_per_epoch(9) == 3);
  CHECK(task->test_examples() == 3);
  CHECK(task->selection_metric() == "valid_accuracy");  // select_epoch auto: the words view selects

  Batch batch;
  task->test_example(1, DType::f32, batch);           // "Where is John?" after three statements
  CHECK(batch.get("words").shape() == Shape{1, 18});  // 5 + 5 + 5 statement words + 3
  const Task::Lines lines = task->describe_example(batch, Tensor::zeros(Shape{1, 20}, DType::f32));
  REQUIRE(lines.size() == 4);
  CHECK(lines[0].second ==
        "mary went to the kitchen john moved to the garden mary went to the office where is john");
  CHECK(lines[1].second == "garden");

  // A padded batch: the shorter rows end with zeros, their mask a prefix of ones.
  Batch b;
  task->validation_batch(0, 3, DType::f64, b);
  CHECK(b.get("words").shape() == Shape{3, 18});
  CHECK(row_ids(b, 2).size() == 6);  // "sandra went home where is sandra"
  CHECK(b.get("words").at(2 * 18 + 17) == 0);
  CHECK(b.get("words_mask").at(2 * 18 + 17) == 0);
  CHECK(b.get("answer").shape() == Shape{3});
  // Training batches are a pure function of the step.
  Batch t1, t2;
  task->train_batch(5, 4, DType::f32, t1);
  task->train_batch(5, 4, DType::f32, t2);
  for (const auto& [name, t] : t1.fields()) CHECK(t.to_vector() == t2.get(name).to_vector());
  // The largest training batch is as long as any.
  Batch big;
  task->largest_train_batch(4, DType::f32, big);
  CHECK(big.get("words").dim(1) == 18);

  // Scoring: a perfect predictor and one that always answers word 0.
  Predictor perfect = [](const Batch& batch) {
    const Tensor& ans = batch.get("answer");
    Tensor scores = Tensor::zeros(Shape{ans.dim(0), 30}, DType::f32);
    for (int64_t i = 0; i < ans.dim(0); ++i) scores.set(i * 30 + int64_t(ans.at(i)), 1.0);
    return scores;
  };
  Predictor nil = [](const Batch& batch) {
    return Tensor::zeros(Shape{batch.get("answer").dim(0), 30}, DType::f32);
  };
  CHECK(task->selection_score(perfect, 2, DType::f32).value() == 100.0);
  CHECK(task->selection_score(nil, 2, DType::f32).value() == 0.0);
  const nlohmann::json good = task->evaluate(perfect, 2, DType::f32);
  CHECK(good.at("per_task_error").at("1") == 0.0);
  CHECK(good.at("failed_tasks") == 0);
  CHECK(good.at("failed_task_ids") == nlohmann::json::array());
  const nlohmann::json bad = task->evaluate(nil, 2, DType::f32);
  CHECK(bad.at("per_task_error").at("1") == 100.0);
  CHECK(bad.at("task_errors") == bad.at("per_task_error"));  // the old name stays for its readers
  CHECK(bad.at("mean_error") == 100.0);
  CHECK(bad.at("failed_tasks") == 1);
  CHECK(bad.at("failed_task_ids") == nlohmann::json::array({1}));
  CHECK(bad.at("train_sets") == nlohmann::json::object());
}

TEST_CASE("babi views: the memory view is the default and selects nothing; bad names are named") {
  TempDir dir;
  write(dir, "en", 1, "train", repeat(kTwoStories, 10));
  write(dir, "en", 1, "test", kTwoStories);
  auto task = create_task("babi", {{"data_dir", dir.path.string()}, {"babi_task", 1}});
  CHECK(task->config().at("babi_view") == "memory");
  CHECK(task->model_dims().contains("memory_size"));
  CHECK(task->selection_metric().empty());
  auto valid = create_task(
      "babi", {{"data_dir", dir.path.string()}, {"babi_task", 1}, {"select_epoch", "valid"}});
  CHECK(valid->selection_metric() == "valid_accuracy");
  auto last = create_task("babi", {{"data_dir", dir.path.string()},
                                   {"babi_task", 1},
                                   {"babi_view", "words"},
                                   {"select_epoch", "last"}});
  CHECK(last->selection_metric().empty());
  CHECK_THROWS_WITH_AS(
      create_task("babi", {{"data_dir", dir.path.string()}, {"babi_view", "sentences"}}),
      doctest::Contains("babi_view must be \"memory\""), Error);
  CHECK_THROWS_WITH_AS(
      create_task("babi", {{"data_dir", dir.path.string()}, {"select_epoch", "best"}}),
      doctest::Contains("select_epoch must be"), Error);
}

TEST_CASE("babi en-10k: task 3 without its training file trains on en's, said in train_sets") {
  TempDir dir;
  const std::string en3 = repeat(kTwoStories, 10), tenk = repeat(kTwoStories, 20);
  write(dir, "en", 3, "train", en3);
  write(dir, "en", 3, "test", kTwoStories);
  write(dir, "en-10k", 3, "test", kTwoStories);  // no en-10k qa3 training file, as in our copy
  write(dir, "en-10k", 1, "train", tenk);
  write(dir, "en-10k", 1, "test", kTwoStories);

  babi::LoadOptions o;
  o.data_dir = dir.path.string();
  o.set = "en-10k";
  o.tasks = {1, 3};
  const babi::Data d = babi::load(o);
  CHECK(d.train_sets == std::map<int, std::string>{{3, "en"}});
  int task3_train = 0, task1_train = 0;
  for (const babi::Example& e : d.train) (e.task == 3 ? task3_train : task1_train)++;
  CHECK(task3_train == 27);  // 30 questions of en's file, the last 10% validate
  CHECK(task1_train == 54);  // 60 of en-10k's

  // The whole story of each question, for views that read more than the window.
  const babi::Example& q1 = d.test[0];
  const babi::Example& q2 = d.test[1];
  const babi::Example& q3 = d.test[2];
  CHECK(q1.story == q2.story);
  CHECK(q3.story != q2.story);
  CHECK(q1.story_first == q2.story_first);
  CHECK(q1.before == 1);
  CHECK(q2.before == 3);
  CHECK(q3.before == 1);
  CHECK(d.sentence(q2.story_first + 2).size() == 5);  // "mary went to the office"
  CHECK(q2.first == q2.story_first);                  // the window is the whole prefix here

  auto task = create_task(
      "babi", {{"data_dir", dir.path.string()}, {"babi_task", "1,3"}, {"babi_set", "en-10k"}});
  Predictor nil = [](const Batch& batch) {
    return Tensor::zeros(Shape{batch.get("answer").dim(0), 30}, DType::f32);
  };
  const nlohmann::json m = task->evaluate(nil, 4, DType::f32);
  CHECK(m.at("train_sets") == nlohmann::json{{"3", "en"}});
  CHECK(task->format_metrics(m).find("(trained on en)") != std::string::npos);

  // en has every file: nothing is borrowed. Another task without its en-10k training file is an
  // error naming it, as is task 3 when en's file is missing too.
  o.set = "en";
  o.tasks = {3};
  CHECK(babi::load(o).train_sets.empty());
  write(dir, "en-10k", 2, "test", kTwoStories);
  CHECK_THROWS_WITH_AS(
      create_task("babi",
                  {{"data_dir", dir.path.string()}, {"babi_task", 2}, {"babi_set", "en-10k"}}),
      doctest::Contains("en-10k/qa2_*_train.txt: no such file"), Error);
  std::filesystem::remove(dir.path / babi::kDataFolder / "en" / "qa3_fixture_train.txt");
  CHECK_THROWS_WITH_AS(
      create_task("babi",
                  {{"data_dir", dir.path.string()}, {"babi_task", 3}, {"babi_set", "en-10k"}}),
      doctest::Contains("en/qa3_*_train.txt: no such file"), Error);
}

TEST_CASE("babi eval --scores: every question's answer with its file and line, commas quoted") {
  TempDir dir;
  // Task 19 style: an answer with a comma. 10 copies: 27 training, 3 validation questions.
  const char* paths =
      "1 The kitchen is north of the hallway.\n"
      "2 How do you go from the hallway to the kitchen?\tn,w\t1\n"
      "3 Where is the kitchen?\tnorth\t1\n"
      "1 Mary went home.\n"
      "2 Where is Mary?\thome\t1\n";
  write(dir, "en", 19, "train", repeat(paths, 10));
  write(dir, "en", 19, "test", paths);
  // The id of "north", from the memory view's second test question (the views share the
  // vocabulary; a view's own tokens come after the words).
  Batch probe;
  create_task("babi", {{"data_dir", dir.path.string()}, {"babi_task", 19}})
      ->test_example(1, DType::f64, probe);
  const auto north = int64_t(probe.get("answer").at(0));
  for (const std::string view : {"memory", "words", "memory-story"}) {
    CAPTURE(view);
    auto task = create_task(
        "babi", {{"data_dir", dir.path.string()}, {"babi_task", 19}, {"babi_view", view}});
    const int64_t classes = task->model_dims().at("vocab_size").get<int64_t>();
    // Answers "north" to every question: right on "where is the kitchen" only.
    Predictor answers_north = [&](const Batch& batch) {
      // [B] answers (one question a sample), or [B, Q] (memory-story: a story's questions).
      Shape shape = batch.get(batch.has("answer") ? "answer" : "answers").shape();
      shape.dims[size_t(shape.rank++)] = classes;
      Tensor scores = Tensor::zeros(shape, DType::f64);
      for (int64_t i = 0; i < shape.numel() / classes; ++i) scores.set(i * classes + north, 1.0);
      return scores;
    };
    const std::string csv = task->scores_csv(answers_north, 4, DType::f64);
    std::vector<std::string> lines;
    for (size_t at = 0, nl; (nl = csv.find('\n', at)) != std::string::npos; at = nl + 1)
      lines.push_back(csv.substr(at, nl - at));
    REQUIRE(lines.size() == 1 + 3 + 3 + 27);  // header, test, valid, train
    CHECK(lines[0] == "split,task,file,line,question,answer,predicted,correct");
    CHECK(lines[1] ==
          "test,19,qa19_fixture_test.txt,2,how do you go from the hallway to the kitchen,"
          "\"n,w\",north,0");
    CHECK(lines[2] == "test,19,qa19_fixture_test.txt,3,where is the kitchen,north,north,1");
    CHECK(lines[3] == "test,19,qa19_fixture_test.txt,5,where is mary,home,north,0");
    // Validation: the last 3 of the 30 training questions (the tenth copy's lines 47-50).
    CHECK(lines[4].rfind("valid,19,qa19_fixture_train.txt,47,", 0) == 0);
    CHECK(lines[6] == "valid,19,qa19_fixture_train.txt,50,where is mary,home,north,0");
    CHECK(lines[7].rfind("train,19,qa19_fixture_train.txt,2,", 0) == 0);
    CHECK(lines.back().rfind("train,19,qa19_fixture_train.txt,45,", 0) == 0);
  }
}
