// The bAbI loader and task: the text format on small files written here (stories, list answers,
// direction pairs, the memory window, tokens, every malformed-line error with file:line, escaped
// quotes of file text), files without questions or too few to split, settings out of range,
// batches, evaluation, and counts on the real data in ../shared/data/babi (ctest entry
// tasks_shared_data, skipped when it is absent).
#include <doctest/doctest.h>

#include <unistd.h>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/sha256.hpp"
#include "tasks/babi.hpp"
#include "tasks/task.hpp"
#include "tests/tasks/babi_fixture.hpp"
#include "tests/test_util.hpp"

using namespace memgrad;
using memgrad::test::error_of;
using memgrad::test::TempDir;
using memgrad::test::babi_fixture::kStories;
using memgrad::test::babi_fixture::write_task;
namespace fs = std::filesystem;

namespace {

// CHECK that `text` contains `part`, showing the text when it does not.
#define CHECK_HAS(text, part)                                    \
  do {                                                           \
    const std::string text_ = (text);                            \
    CHECK_MESSAGE(text_.find(part) != std::string::npos, text_); \
  } while (0)

const std::string kRealData = test::shared_path("data/babi");

}  // namespace

TEST_CASE("babi: tokens are lower-cased with punctuation split off and dropped") {
  using V = std::vector<std::string>;
  CHECK(babi::tokenize("Mary moved to the Bathroom.") ==
        V{"mary", "moved", "to", "the", "bathroom"});
  CHECK(babi::tokenize("Where is Mary? ") == V{"where", "is", "mary"});
  CHECK(babi::tokenize("  Is the box bigger than the chocolate?") ==
        V{"is", "the", "box", "bigger", "than", "the", "chocolate"});
  CHECK(babi::tokenize("a.b") == V{"a", "b"});
  CHECK(babi::tokenize("...").empty());
}

TEST_CASE("babi: a multi-story file, list answers and direction pairs") {
  TempDir dir;
  const std::string path =
      dir.write("qa.txt", std::string(kStories) +
                              "1 Mary picked up the apple.\n"
                              "2 Mary got the football there.\n"
                              "3 What is Mary carrying?\tapple,football\t1 2\n"
                              "4 The kitchen is north of the garden.\n"
                              "5 How do you go from the garden to the kitchen?\tN,W\t4\n");
  const babi::RawFile f = babi::read_file(path);
  REQUIRE(f.stories.size() == 3);
  CHECK(f.stories[0].size() == 3);
  CHECK(f.stories[1].size() == 1);
  CHECK(f.stories[2].size() == 3);
  CHECK(f.stories[1][0] == std::vector<std::string>{"sandra", "journeyed", "to", "the", "office"});
  REQUIRE(f.questions.size() == 5);
  const babi::RawQuestion& q1 = f.questions[1];
  CHECK(q1.words == std::vector<std::string>{"where", "is", "daniel"});
  CHECK(q1.answer == "hallway");
  CHECK(q1.story == 0);
  CHECK(q1.statements == 3);                    // questions are not statements
  CHECK(q1.supporting == std::vector<int>{2});  // line id 4 is the third statement
  CHECK(q1.line == 5);
  CHECK(f.questions[2].story == 1);
  CHECK(f.questions[2].statements == 1);
  CHECK(f.questions[3].answer == "apple,football");  // one token
  CHECK(f.questions[3].supporting == std::vector<int>{0, 1});
  CHECK(f.questions[4].answer == "n,w");  // lower-cased, one token
}

TEST_CASE("babi: malformed lines are errors naming file and line") {
  TempDir dir;
  auto err = [&](const std::string& text) {
    const std::string path = dir.write("bad.txt", text);
    return error_of([&] { babi::read_file(path); });
  };
  const std::string p = (dir.path / "bad.txt").string();
  CHECK_HAS(err("1 Mary went home.\n2 Where is Mary? home 1\n"),
            p + ":2: question without a tab-separated answer");
  CHECK_HAS(err("1 Mary went home.\nx Where is Mary?\thome\t1\n"), p + ":2: bad line id 'x'");
  CHECK_HAS(err("1 Mary went home.\n3 John went home.\n"), p + ":2: bad line id 3 after id 1");
  CHECK_HAS(err("2 Mary went home.\n"), p + ":1: bad line id 2: the first line");
  CHECK_HAS(err("1 Mary went home.\n2 John went to the garden.\tgarden\t1\n"),
            p + ":2: answer with no question");
  CHECK_HAS(err("1 Mary went home.\n2 \thome\t1\n"), p + ":2: answer with no question");
  CHECK_HAS(err("1 Mary went home.\n2 Where is Mary?\t \t1\n"), p + ":2: empty answer");
  CHECK_HAS(err("1 Mary went home.\n2 Where is Mary?\thome\t7\n"),
            p + ":2: bad supporting fact id '7'");
  CHECK_HAS(err("1 Mary went home.\n2 Where is Mary?\thome\t1\n3 Is it?\tyes\t2\n"),
            p + ":3: bad supporting fact id '2'");  // a question, not a statement
  CHECK_HAS(err("1 Mary went home.\n2 Where is Mary?\thome\t1\textra\n"),
            p + ":2: more than three tab-separated fields");
  CHECK_HAS(err("1 .\n"), p + ":1: empty sentence");
  CHECK(err("1 Mary went home.\n\n2 Where is Mary?\thome\t1\n") == "(no error)");  // blank lines
  const std::string missing = (dir.path / "absent.txt").string();
  CHECK_HAS(error_of([&] { babi::read_file(missing); }), missing + ": cannot open");
}

TEST_CASE("babi: task lists") {
  CHECK(babi::parse_task_list("3") == std::vector<int>{3});
  CHECK(babi::parse_task_list("all").size() == 20);
  CHECK(babi::parse_task_list("1,2,4-6") == std::vector<int>{1, 2, 4, 5, 6});
  CHECK_THROWS_AS(babi::parse_task_list("21"), Error);
  CHECK_THROWS_AS(babi::parse_task_list("x"), Error);
}

TEST_CASE("babi: loading, the vocabulary, the split and the 50-sentence window") {
  TempDir dir;
  // A story of 60 statements and a question about it, plus kStories: 4 training questions.
  std::string long_story;
  for (int i = 1; i <= 60; ++i)
    long_story += std::to_string(i) + " Fact number f" + std::to_string(i) + ".\n";
  long_story += "61 Which fact is last?\tf60\t60\n";
  write_task(dir, 1, std::string(kStories) + long_story, kStories);
  babi::LoadOptions o;
  o.data_dir = dir.path.string();
  const babi::Data d = babi::load(o);
  CHECK(d.vocab.word(0) == "<nil>");
  CHECK(d.vocab.word(1) == "mary");  // order of first appearance
  CHECK(d.vocab.find("Mary") == -1);
  CHECK(d.vocab.find("f60") > 0);
  CHECK(d.sentence_len == 6);  // "daniel went back to the hallway"
  CHECK(d.memory_size == 50);
  // 4 training questions: floor(0.9 * 4) = 3 train, 1 validation (the last of the file).
  CHECK(d.train.size() == 3);
  CHECK(d.valid.size() == 1);
  CHECK(d.test.size() == 3);
  const babi::Example& last = d.valid[0];
  CHECK(last.count == 50);
  CHECK(d.sentence(last.first)[2] == d.vocab.find("f11"));  // statements 11..60 are kept
  CHECK(d.sentence(last.first + 49)[2] == d.vocab.find("f60"));
  CHECK(last.answer == d.vocab.find("f60"));

  // A smaller memory, and the batch fields.
  o.memory_size = 2;
  const babi::Data small = babi::load(o);
  CHECK(small.memory_size == 2);
  Batch batch;
  const std::vector<int64_t> idx = {1, 2, 0};  // 2, 1 and 2 memories
  babi::fill_batch(small, small.train, idx, nullptr, 0, DType::f32, batch);
  CHECK(batch.size == 3);
  CHECK(batch.get("story").shape() == Shape{3, 2, 6});
  CHECK(batch.get("time").shape() == Shape{3, 2});
  CHECK(batch.get("memory_mask").shape() == Shape{3, 2});
  CHECK(batch.get("query").shape() == Shape{3, 6});
  CHECK(batch.get("answer").shape() == Shape{3});
  // Sample 0: "where is daniel" sees the last two statements, oldest first, times 2, 1.
  const Tensor& story = batch.get("story");
  CHECK(story.at(0) == small.vocab.find("john"));
  CHECK(story.at(6) == small.vocab.find("daniel"));
  CHECK(batch.get("time").at(0) == 2);
  CHECK(batch.get("time").at(1) == 1);
  // Sample 1: one memory, an empty slot (nil words, time 0, mask 0).
  CHECK(story.at(12) == small.vocab.find("sandra"));
  CHECK(batch.get("memory_mask").at(2) == 1);
  CHECK(batch.get("memory_mask").at(3) == 0);
  CHECK(batch.get("time").at(3) == 0);
  CHECK(story.at(13) == small.vocab.find("journeyed"));
  CHECK(story.at(17) == 0);  // a five-word sentence padded with nil
  for (int w = 18; w < 24; ++w) CHECK(story.at(w) == 0);
  CHECK(batch.get("query").at(6) == small.vocab.find("where"));
  CHECK(batch.get("query").at(9) == 0);  // "where is sandra" padded with nil
  CHECK(batch.get("answer").at(1) == small.vocab.find("office"));
}

TEST_CASE("babi: the memory size comes from the training file (official config.sz)") {
  TempDir dir;
  // Test stories longer than any training story: their windows are cut to the training maximum.
  std::string long_story;
  for (int i = 1; i <= 8; ++i)
    long_story += std::to_string(i) + " Fact number f" + std::to_string(i) + ".\n";
  long_story += "9 Which fact is last?\tf8\t8\n";
  write_task(dir, 1, kStories, long_story);
  babi::LoadOptions o;
  o.data_dir = dir.path.string();
  const babi::Data d = babi::load(o);
  CHECK(d.memory_size == 3);  // the longest training story prefix ("where is daniel")
  REQUIRE(d.test.size() == 1);
  CHECK(d.test[0].count == 3);  // the last three of 8 statements
  CHECK(d.sentence(d.test[0].first)[2] == d.vocab.find("f6"));
  CHECK(d.sentence(d.test[0].first + 2)[2] == d.vocab.find("f8"));
}

TEST_CASE("babi: random noise inserts gaps into the temporal indices") {
  TempDir dir;
  std::string story;
  for (int i = 1; i <= 30; ++i) story += std::to_string(i) + " Fact f" + std::to_string(i) + ".\n";
  story += "31 Which?\tf1\t1\n";
  write_task(dir, 1, story, story);
  babi::LoadOptions o;
  o.data_dir = dir.path.string();
  o.valid_fraction = 0;
  const babi::Data d = babi::load(o);
  REQUIRE(d.train.size() == 1);
  const std::vector<int64_t> idx(64, 0);
  Batch batch;
  Rng rng(5, 1);
  babi::fill_batch(d, d.train, idx, &rng, 0.1, DType::f64, batch);
  const Tensor& t = batch.get("time");
  bool some_gap = false;
  for (int64_t s = 0; s < 64; ++s) {
    for (int64_t k = 0; k < 30; ++k) {
      const double v = t.at(s * 30 + k);
      CHECK(v >= 1);
      CHECK(v <= 30);                               // clipped to memory_size (30 here)
      if (k > 0) CHECK(v <= t.at(s * 30 + k - 1));  // descending: the oldest has the largest
      if (v != 30 - k) some_gap = true;             // not the exact indices 30, 29, ..., 1
    }
  }
  CHECK(some_gap);
}

TEST_CASE("babi: the task: settings, dims, pure training batches, evaluation") {
  TempDir dir;
  std::string train;
  for (int i = 0; i < 10; ++i) train += kStories;  // 30 questions: 27 train, 3 validation
  write_task(dir, 1, train, kStories);
  auto task = create_task("babi", {{"data_dir", dir.path.string()}, {"babi_task", 1}});
  CHECK(task->name() == "babi");
  CHECK(task->config().at("memory_size") == 50);
  const nlohmann::json dims = task->model_dims();
  CHECK(dims.at("vocab_size").get<int>() >= 10);
  CHECK(dims.at("sentence_len") == 6);
  CHECK(dims.at("memory_size") == 3);  // the longest story prefix
  CHECK(task->steps_per_epoch(8) == 3);
  CHECK(task->validation_batches(2) == 2);

  Batch a, b;
  task->train_batch(4, 8, DType::f32, a);
  task->train_batch(4, 8, DType::f32, b);
  for (const auto& [name, t] : a.fields()) CHECK(t.to_vector() == b.get(name).to_vector());
  task->validation_batch(1, 2, DType::f32, a);
  CHECK(a.size == 1);  // the last, partial validation batch

  // A perfect predictor and one that always answers word 0.
  Predictor perfect = [](const Batch& batch) {
    const Tensor& ans = batch.get("answer");
    Tensor scores = Tensor::zeros(Shape{ans.dim(0), 40}, DType::f32);
    for (int64_t i = 0; i < ans.dim(0); ++i) scores.set(i * 40 + int64_t(ans.at(i)), 1.0);
    return scores;
  };
  Predictor nil = [](const Batch& batch) {
    return Tensor::zeros(Shape{batch.get("answer").dim(0), 40}, DType::f32);
  };
  const nlohmann::json good = task->evaluate(perfect, 2, DType::f32);
  CHECK(good.at("task_errors").at("1") == 0.0);
  CHECK(good.at("mean_error") == 0.0);
  CHECK(good.at("failed_tasks") == 0);
  CHECK(good.at("test_questions").at("1") == 3);
  CHECK(good.at("train_mean_error") == 0.0);  // for model selection
  CHECK(good.at("valid_task_errors").at("1") == 0.0);
  const nlohmann::json bad = task->evaluate(nil, 2, DType::f32);
  CHECK(bad.at("task_errors").at("1") == 100.0);
  CHECK(bad.at("failed_tasks") == 1);
  CHECK(bad.at("train_task_errors").at("1") == 100.0);
  CHECK(bad.at("valid_mean_error") == 100.0);
  const std::string table = task->format_metrics(bad);
  CHECK(table.find("100.0  failed") != std::string::npos);
  CHECK(table.find("mean  100.0   failed 1 of 1") != std::string::npos);

  CHECK_THROWS_WITH_AS(create_task("babi", {{"data_dir", dir.path.string()}, {"babi_tsk", 1}}),
                       doctest::Contains("unknown setting 'babi_tsk'"), Error);
  // A task whose files are absent: the error names the file pattern.
  CHECK_HAS(error_of([&] {
              create_task("babi", {{"data_dir", dir.path.string()}, {"babi_task", "2"}});
            }),
            "qa2_*_train.txt: no such file");
  // A malformed line in a task file: file and line.
  write_task(dir, 3, "1 Mary went home.\n2 Where is Mary? home 1\n", kStories);
  CHECK_HAS(error_of([&] {
              create_task("babi", {{"data_dir", dir.path.string()}, {"babi_task", 3}});
            }),
            "qa3_test-task_train.txt:2: question without a tab-separated answer");
}

TEST_CASE("babi: random_time is a fraction in [0, 1]") {
  TempDir dir;
  std::string train;
  for (int i = 0; i < 10; ++i) train += kStories;
  write_task(dir, 1, train, kStories);
  auto create = [&](double random_time) {
    return error_of([&] {
      create_task("babi", {{"data_dir", dir.path.string()}, {"random_time", random_time}});
    });
  };
  // 1e9 used to grow memory without bound in the first training batch, 1e15 to throw bad_alloc.
  for (const char* v : {"1e+09", "1e+15", "1.5", "-0.5"})
    CHECK_HAS(create(std::stod(v)),
              std::string("babi: random_time (--random-time) must be in [0, 1], got ") + v);
  CHECK(create(0) == "(no error)");
  CHECK(create(1) == "(no error)");
  CHECK(create(0.1) == "(no error)");
  // fill_batch checks it too when it adds noise (its callers other than the task).
  babi::LoadOptions o;
  o.data_dir = dir.path.string();
  const babi::Data d = babi::load(o);
  Batch batch;
  Rng rng(1, 1);
  const std::vector<int64_t> idx = {0};
  CHECK_HAS(error_of([&] { babi::fill_batch(d, d.train, idx, &rng, 1e9, DType::f32, batch); }),
            "random_time (--random-time) must be in [0, 1], got 1e+09");
  babi::fill_batch(d, d.train, idx, &rng, 1.0, DType::f32, batch);
  CHECK(batch.size == 1);
  // memory_size is a whole number that fits an int (no silent truncation).
  CHECK_HAS(error_of([&] {
              create_task("babi", {{"data_dir", dir.path.string()}, {"memory_size", 4294967297}});
            }),
            "babi: memory_size must be a whole number in [1, 2147483647], got '4294967297'");
  CHECK_HAS(error_of([&] {
              create_task("babi", {{"data_dir", dir.path.string()}, {"memory_size", 2.5}});
            }),
            "babi: memory_size must be a whole number");
}

TEST_CASE("babi: a file without questions is an error naming it, train and test alike") {
  TempDir dir;
  const std::string statements = "1 Mary went home.\n2 John went out.\n1 Bob sat down.\n";
  auto load_error = [&](const std::string& train, const std::string& test) {
    write_task(dir, 1, train, test);
    return error_of([&] { create_task("babi", {{"data_dir", dir.path.string()}}); });
  };
  const std::string base = (dir.path / babi::kDataFolder / "en" / "qa1_test-task_").string();
  // The test file used to fail only after training: "metrics: bAbI summary of no tasks".
  CHECK_HAS(load_error(kStories, ""), base + "test.txt: no questions (the file is empty)");
  CHECK_HAS(load_error(kStories, "\n\n"), base + "test.txt: no questions (the file is empty)");
  CHECK_HAS(load_error(kStories, statements),
            base + "test.txt: no questions (3 statements in 2 stories, but no question line");
  CHECK_HAS(load_error("", kStories), base + "train.txt: no questions (the file is empty)");
  CHECK_HAS(load_error(statements, kStories),
            base + "train.txt: no questions (3 statements in 2 stories");
  // Joint runs: the task whose file has no questions is named.
  write_task(dir, 1, kStories, kStories);
  write_task(dir, 2, kStories, "1 Mary went home.\n");
  CHECK_HAS(error_of([&] {
              create_task("babi", {{"data_dir", dir.path.string()}, {"babi_task", "1-2"}});
            }),
            "qa2_test-task_test.txt: no questions (1 statement in 1 story");
}

TEST_CASE("babi: a training file too small to split names the file and the split") {
  TempDir dir;
  const std::string path =
      (dir.path / babi::kDataFolder / "en" / "qa1_test-task_train.txt").string();
  write_task(dir, 1, "1 Mary went home.\n2 Where is Mary?\thome\t1\n", kStories);
  // It used to say only "babi: no training questions".
  CHECK_HAS(error_of([&] {
              create_task("babi", {{"data_dir", dir.path.string()}});
            }),
            path +
                ": too few questions to train on: 1 question, split 0 train / 1 validation (the "
                "last 10% of each training file validates); at least 2 are needed");
  // In a joint run too, though the other task has training questions.
  write_task(dir, 2, kStories, kStories);
  CHECK_HAS(error_of([&] {
              create_task("babi", {{"data_dir", dir.path.string()}, {"babi_task", "1,2"}});
            }),
            path + ": too few questions to train on");
  // Two questions split 1 / 1; without validation one question is enough.
  write_task(dir, 1, "1 Mary went home.\n2 Where is Mary?\thome\t1\n3 Is she?\tyes\t1\n", kStories);
  babi::LoadOptions o;
  o.data_dir = dir.path.string();
  const babi::Data d = babi::load(o);
  CHECK(d.train.size() == 1);
  CHECK(d.valid.size() == 1);
  write_task(dir, 1, "1 Mary went home.\n2 Where is Mary?\thome\t1\n", kStories);
  o.valid_fraction = 0;
  CHECK(babi::load(o).train.size() == 1);
  o.valid_fraction = 0.5;
  CHECK_HAS(error_of([&] { babi::load(o); }),
            "split 0 train / 1 validation (the last 50% of each training file validates); at "
            "least 2 are needed");
}

TEST_CASE("babi: file text quoted in errors is escaped and cut") {
  TempDir dir;
  auto err = [&](const std::string& text) {
    const std::string path = dir.write("bad.txt", text);
    return error_of([&] { babi::read_file(path); });
  };
  const std::string p = (dir.path / "bad.txt").string();
  // The start of an ELF binary used to be echoed raw.
  const std::string elf(
      "\x7f"
      "ELF\x02\x01\x01\x00\x00\x00 x\n",
      14);
  CHECK_HAS(err(elf), p + ":1: column 1: byte 0x7f (a control character); a bAbI file is UTF-8 "
                          "text: '\\x7fELF\\x02\\x01\\x01\\x00\\x00\\x00 x'");
  CHECK_HAS(err("\xc3\xa9t\xc3\xa9\\ Mary went home.\n"),
            p + ":1: bad line id '\\xc3\\xa9t\\xc3\\xa9\\\\' (a line");
  // Long quotes are cut to 60 characters and "...", with the full length.
  const std::string long_id(500, 'x');
  const std::string e = err(long_id + " Mary went home.\n");
  CHECK_HAS(e, p + ":1: bad line id '" + std::string(60, 'x') + "...' (500 bytes) (a line");
  CHECK(e.size() < 200);
  CHECK_HAS(
      err(std::string(100, '\x01') + "\n"),
      p + ":1: column 1: byte 0x01 (a control character); a bAbI file is UTF-8 text: '" +
          [] {
            std::string s;
            for (int i = 0; i < 15; ++i) s += "\\x01";
            return s;
          }() +
          "...' (100 bytes)");
  CHECK_HAS(err("1 Mary went home.\n2 Where is Mary?\tho\x1b[2Jme now\t1\n"),
            p + ":2: column 20: byte 0x1b (a control character); a bAbI file is UTF-8 text: '2 "
                "Where is Mary?\\x09ho\\x1b[2Jme now\\x091'");
  CHECK_HAS(err("1 Mary went home.\n2 Where is Mary?\tho\\me now\t1\n"),
            p + ":2: answer 'ho\\\\me now' is not one token");
  // A line longer than 64 KiB (a binary or a wrong file) is rejected, not read whole.
  CHECK_HAS(err("1 Mary went home.\n2 " + std::string(70000, 'a') + "\n"),
            p + ":2: line longer than 65536 bytes (not a bAbI text file?): '2 aaaa");
  const std::string longest = "1 Mary went to the " + std::string(65536 - 20, 'a') + ".";
  REQUIRE(longest.size() == 65536);
  CHECK(err(longest + "\n2 Where is Mary?\thome\t1\n") == "(no error)");
  CHECK(err("1 Mary went home.\n2 Where is Mary?\thome\t1\n" + longest + "\n") == "(no error)");
  // Settings are quoted the same way.
  CHECK_HAS(error_of([] { babi::parse_task_list("1\x1b[31m"); }), "bad task '1\\x1b[31m'");
}

TEST_CASE("babi: a file cut mid-line, NUL and Latin-1 bytes are refused with file and line") {
  TempDir dir;
  auto err = [&](const std::string& text) {
    const std::string path = dir.write("cut.txt", text);
    return error_of([&] { babi::read_file(path); });
  };
  const std::string p = (dir.path / "cut.txt").string();
  const std::string whole = "1 Mary went home.\n2 Where is Mary?\thome\t1\n";
  REQUIRE(err(whole) == "(no error)");
  // Every cut of the file that is not at a line end (the half answer "ho" used to be a word).
  for (size_t n = 1; n < whole.size(); ++n) {
    if (whole[n - 1] == '\n') continue;
    INFO("first ", n, " bytes");
    const std::string line = n < 18 ? "1" : "2";
    CHECK_HAS(
        err(whole.substr(0, n)),
        p + ":" + line + ": the file ends inside this line (no newline after it: truncated?)");
  }
  CHECK_HAS(err("1 Mary went home.\n2 Where is Mary?\tho"),
            ":2: the file ends inside this line (no newline after it: truncated?): '2 Where is "
            "Mary?\\x09ho'");
  CHECK_HAS(err("1 Mary went home.\n  "), p + ":2: the file ends inside this line");
  // NUL and Latin-1 bytes used to become tokens ("ki\0tchen", "caf\xe9").
  CHECK_HAS(err(std::string("1 Mary went to the ki\0tchen.\n", 29)),
            p + ":1: column 22: byte 0x00 (a control character); a bAbI file is UTF-8 text");
  CHECK_HAS(err("1 Mary went home.\n2 Mary went to the caf\xe9.\n"),
            p + ":2: column 23: byte 0xe9 (not UTF-8; a Latin-1 or Windows-1252 file?)");
  CHECK_HAS(err("1 Mary went home.\n2 Where is Mary?\thome\r\t1\n"),
            p + ":2: column 22: byte 0x0d (a control character)");
  // Valid UTF-8 and CRLF line ends are text.
  CHECK(err("1 Mary went to the caf\xc3\xa9.\r\n2 Where is Mary?\tcaf\xc3\xa9\t1\r\n") ==
        "(no error)");
  CHECK(err("") == "(no error)");  // empty: no lines, no questions (load() refuses it)
}

TEST_CASE("babi: files are checked against the data folder's SHA256SUMS.txt when it has one") {
  TempDir dir;
  const std::string train = std::string(kStories) + kStories;
  const std::string root = write_task(dir, 1, train, kStories);
  babi::LoadOptions o;
  o.data_dir = root;
  CHECK(babi::load(o).train.size() == 5);  // no SHA256SUMS.txt: nothing to check
  const std::string folder = std::string(babi::kDataFolder) + "/en/";
  const std::string sums = dir.write(
      "SHA256SUMS.txt", sha256_hex(train) + "  ./" + folder + "qa1_test-task_train.txt\n" +
                            sha256_hex(kStories) + "  ./" + folder + "qa1_test-task_test.txt\n");
  CHECK(babi::load(o).train.size() == 5);
  o.data_dir = root + "/" + babi::kDataFolder;  // the tasks folder itself: its parent's sums
  CHECK(babi::load(o).train.size() == 5);
  o.data_dir = root;
  // One changed byte (a valid file still) is named, with the line of SHA256SUMS.txt.
  std::string edited = kStories;
  edited[2] = 'm';
  const std::string test_path = dir.write(folder + "qa1_test-task_test.txt", edited);
  CHECK_HAS(error_of([&] { babi::load(o); }),
            test_path + ": SHA-256 differs from " + sums + ":2 (expected " + sha256_hex(kStories));
  // A file the sums do not list.
  dir.write(folder + "qa1_test-task_test.txt", kStories);
  dir.write(folder + "qa2_other_train.txt", train);
  dir.write(folder + "qa2_other_test.txt", kStories);
  o.tasks = {1, 2};
  CHECK_HAS(error_of([&] { babi::load(o); }), "qa2_other_train.txt: not listed in " + sums +
                                                  " (as '" + folder + "qa2_other_train.txt'");
  // Only the files of the selected tasks are read and checked.
  o.tasks = {1};
  CHECK(babi::load(o).train.size() == 5);
}

TEST_CASE("babi: counts of the real data (v1.2)" * doctest::test_suite(test::kSharedData)) {
  if (!test::shared_data_present(kRealData)) return;
  auto load = [](const std::string& set, const std::string& tasks) {
    babi::LoadOptions o;
    o.data_dir = kRealData;
    o.set = set;
    o.tasks = babi::parse_task_list(tasks);
    return babi::load(o);
  };
  const babi::Data t1 = load("en", "1");
  CHECK(t1.train.size() == 900);
  CHECK(t1.valid.size() == 100);
  CHECK(t1.test.size() == 1000);
  CHECK(t1.sentence_len == 6);
  CHECK(t1.memory_size == 10);
  CHECK(t1.vocab.size() == 20);  // nil + 19 words

  const babi::Data all = load("en", "all");
  CHECK(all.train.size() == 18000);
  CHECK(all.valid.size() == 2000);
  CHECK(all.test.size() == 20000);
  CHECK(all.memory_size == 50);
  MESSAGE("bAbI en, all tasks: vocabulary ", all.vocab.size(), ", sentence_len ", all.sentence_len);
  for (const babi::Example& e : all.test) REQUIRE(e.count >= 1);  // every question has a story
  // List answers and direction pairs are single answer words.
  CHECK(all.vocab.find("n,w") > 0);
  int lists = 0;
  for (int i = 0; i < all.vocab.size(); ++i)
    lists += all.vocab.word(i).find(',') != std::string::npos;
  CHECK(lists > 10);
  MESSAGE("answer words with a comma (task 8 lists, task 19 directions): ", lists);

  const babi::Data t1k = load("en-10k", "1");
  CHECK(t1k.train.size() == 9000);
  CHECK(t1k.valid.size() == 1000);
  CHECK(t1k.test.size() == 1000);
  // The en-10k training file of task 3 is not in the shared copy: task 3 trains on en's.
  const babi::Data t3 = load("en-10k", "3");
  CHECK(t3.train_sets == std::map<int, std::string>{{3, "en"}});
  CHECK(t3.train.size() == 900);
  CHECK(t3.test.size() == 1000);
}

TEST_CASE("babi: single test questions for inspection, described in words") {
  TempDir dir;
  std::string train;
  for (int i = 0; i < 10; ++i) train += kStories;
  write_task(dir, 1, train, kStories);
  auto task = create_task("babi", {{"data_dir", dir.path.string()}, {"babi_task", 1}});
  REQUIRE(task->test_examples() == 3);
  Batch one;
  task->test_example(1, DType::f32, one);  // "Where is Daniel?" after three statements
  CHECK(one.size == 1);
  const int daniel_hallway = int(one.get("answer").at(0));
  Tensor scores =
      Tensor::zeros(Shape{1, task->model_dims().at("vocab_size").get<int64_t>()}, DType::f32);
  scores.set(daniel_hallway, 1.0);
  const Task::Lines lines = task->describe_example(one, scores);
  auto line = [&](const std::string& key) {
    for (const auto& [k, v] : lines)
      if (k == key) return v;
    return std::string("(absent)");
  };
  CHECK(line("memory 0 (time 3)") == "mary moved to the bathroom");
  CHECK(line("memory 2 (time 1)") == "daniel went back to the hallway");
  CHECK(line("question") == "where is daniel");
  CHECK(line("answer") == "hallway");
  CHECK(line("predicted") == "hallway");
  CHECK(line("correct") == "yes");
  CHECK_HAS(error_of([&] { task->test_example(3, DType::f32, one); }),
            "test sample 3 out of range (3 test samples)");
  CHECK_HAS(error_of([&] { task->text_example("where is mary", DType::f32, one); }),
            "task babi does not read samples written as text");
}
