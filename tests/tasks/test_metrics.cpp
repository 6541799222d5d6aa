// Metrics against hand-computed values (tasks/metrics.hpp). The cross-check against scikit-learn
// on random data is tests/scripts/metrics_vs_sklearn.sh.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tasks/metrics.hpp"

namespace mm = memgrad::metrics;

namespace {

// A file in a fresh temporary directory, removed with the directory at the end of the test.
class TempFiles {
 public:
  TempFiles() {
    dir_ =
        std::filesystem::temp_directory_path() /
        ("memgrad_test_metrics_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    std::filesystem::create_directories(dir_);
  }
  ~TempFiles() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  static inline int counter_ = 0;
  std::filesystem::path dir_;
};

// The DataError message of reading `text` as file `name`, with the directory stripped.
std::string read_error(const std::string& name, const std::string& text) {
  TempFiles files;
  const std::string path = files.write(name, text);
  try {
    mm::to_labels(mm::read_matrix_file(path));  // labels are the strictest reading
  } catch (const mm::DataError& e) {
    std::string message = e.what();
    const auto dir = path.substr(0, path.size() - name.size());
    if (message.rfind(dir, 0) == 0) message = message.substr(dir.size());
    return message;
  }
  return "no error";
}

}  // namespace

TEST_CASE("auc_roc: hand-computed values, ties counted as half") {
  // Positives at 0.8, 0.4; negatives at 0.6, 0.2. Pairs won: (0.8>0.6), (0.8>0.2), (0.4>0.2) = 3/4.
  CHECK(*mm::auc_roc({1, 0, 1, 0}, {0.8, 0.6, 0.4, 0.2}) == doctest::Approx(0.75));
  // A positive tied with a negative counts 1/2: pairs (0.5 vs 0.5)=0.5, (0.5 vs 0.1)=1, (0.9 vs
  // both)=2 -> 3.5 / 4.
  CHECK(*mm::auc_roc({1, 0, 1, 0}, {0.5, 0.5, 0.9, 0.1}) == doctest::Approx(0.875));
  // All scores equal: 0.5 whatever the labels.
  CHECK(*mm::auc_roc({1, 0, 0, 1, 0}, {3, 3, 3, 3, 3}) == doctest::Approx(0.5));
  CHECK(*mm::auc_roc({0, 1}, {0.2, 0.1}) == doctest::Approx(0.0));
  CHECK(*mm::auc_roc({0, 1}, {-5, 7}) == doctest::Approx(1.0));
}

TEST_CASE("auc_roc: undefined without both classes") {
  CHECK_FALSE(mm::auc_roc({0, 0, 0}, {0.1, 0.2, 0.3}).has_value());  // no positive
  CHECK_FALSE(mm::auc_roc({1, 1}, {0.1, 0.2}).has_value());          // all positive
  CHECK_FALSE(mm::auc_roc({1}, {0.3}).has_value());                  // a single sample
  CHECK_FALSE(mm::auc_roc({}, {}).has_value());
}

TEST_CASE("average_precision: step-wise, ties grouped") {
  // Ranked 0.9(+) 0.8(-) 0.7(+) 0.1(-): R steps 1/2 at P=1, 1/2 at P=2/3 -> 1/2 + 1/3.
  CHECK(*mm::average_precision({1, 0, 1, 0}, {0.9, 0.8, 0.7, 0.1}) == doctest::Approx(5.0 / 6));
  // Tied top pair (+,-) then +: threshold 0.5 gives P=1/2, R=1/2; threshold 0.2 gives P=2/3, R=1.
  CHECK(*mm::average_precision({1, 0, 1}, {0.5, 0.5, 0.2}) ==
        doctest::Approx(0.5 * 0.5 + 0.5 * 2.0 / 3));
  // All scores equal: AP = prevalence.
  CHECK(*mm::average_precision({1, 0, 0, 0}, {1, 1, 1, 1}) == doctest::Approx(0.25));
  // All positive: precision is 1 at every threshold.
  CHECK(*mm::average_precision({1, 1, 1}, {0.3, 0.1, 0.3}) == doctest::Approx(1.0));
  CHECK(*mm::average_precision({1}, {0.0}) == doctest::Approx(1.0));
  CHECK_FALSE(mm::average_precision({0, 0}, {0.1, 0.9}).has_value());
}

TEST_CASE("threshold counts, precision/recall/F1 with zero_division=0") {
  // Scores >= 0.5 are predicted: 0.5 counts as predicted.
  const mm::Counts c = mm::count_at_threshold({1, 1, 0, 0, 1}, {0.5, 0.2, 0.7, 0.1, 0.9}, 0.5);
  CHECK(c.tp == 2);
  CHECK(c.fn == 1);
  CHECK(c.fp == 1);
  CHECK(c.tn == 1);
  CHECK(mm::precision(c) == doctest::Approx(2.0 / 3));
  CHECK(mm::recall(c) == doctest::Approx(2.0 / 3));
  CHECK(mm::f1(c) == doctest::Approx(2.0 / 3));
  const mm::Counts none = mm::count_at_threshold({0, 0}, {0.1, 0.2}, 0.5);
  CHECK(mm::precision(none) == 0.0);
  CHECK(mm::recall(none) == 0.0);
  CHECK(mm::f1(none) == 0.0);
}

TEST_CASE("top_k: ties broken by label index, k larger than the number of labels") {
  CHECK(mm::top_k({0.1, 0.9, 0.5, 0.9}, 2) == std::vector<int>{1, 3});
  CHECK(mm::top_k({0.2, 0.2, 0.2}, 2) == std::vector<int>{0, 1});
  CHECK(mm::top_k({0.2, 0.7}, 5) == std::vector<int>{1, 0});
  CHECK_THROWS_AS(mm::top_k({0.2}, 0), std::invalid_argument);
}

TEST_CASE("precision_at_k and recall_at_k") {
  const mm::LabelMatrix y = {{1, 0, 1, 0}, {0, 0, 0, 0}, {0, 1, 0, 0}};
  const mm::ScoreMatrix s = {{0.9, 0.8, 0.1, 0.0}, {0.5, 0.4, 0.3, 0.2}, {0.3, 0.3, 0.3, 0.9}};
  // Top-1: {0}, {0}, {3} -> hits 1, 0, 0.
  CHECK(*mm::precision_at_k(y, s, 1) == doctest::Approx(1.0 / 3));
  // Top-2: {0,1}, {0,1}, {3,0} -> hits 1, 0, 0 -> (1/2) / 3.
  CHECK(*mm::precision_at_k(y, s, 2) == doctest::Approx(1.0 / 6));
  // Top-3: {0,1,2}, {0,1,2}, {3,0,1} (ties by index) -> hits 2, 0, 1 -> (2/3 + 1/3) / 3.
  CHECK(*mm::precision_at_k(y, s, 3) == doctest::Approx(1.0 / 3));
  // R@k leaves out the sample without true labels: R@1 = (1/2 + 0) / 2, R@2 = (1/2 + 0) / 2,
  // R@3 = (2/2 + 1) / 2.
  CHECK(*mm::recall_at_k(y, s, 1) == doctest::Approx(0.25));
  CHECK(*mm::recall_at_k(y, s, 2) == doctest::Approx(0.25));
  CHECK(*mm::recall_at_k(y, s, 3) == doctest::Approx(1.0));
  // k > labels: all 4 labels are taken and the divisor stays k = 10.
  CHECK(*mm::precision_at_k(y, s, 10) == doctest::Approx((2.0 / 10 + 0 + 1.0 / 10) / 3));
  CHECK(*mm::recall_at_k(y, s, 10) == doctest::Approx(1.0));
  CHECK_FALSE(mm::recall_at_k({{0, 0}}, {{0.1, 0.2}}, 1).has_value());
  CHECK_FALSE(mm::precision_at_k({}, {}, 1).has_value());
}

TEST_CASE("hamming_loss") {
  CHECK(mm::hamming_loss({{1, 0}, {0, 1}}, {{0.7, 0.6}, {0.1, 0.2}}, 0.5) == doctest::Approx(0.5));
  CHECK(mm::hamming_loss({{1, 0}}, {{0.7, 0.1}}, 0.5) == 0.0);
}

TEST_CASE("evaluate_multilabel: macro/micro, skipped labels reported") {
  // Label 0 mixed, label 1 all positive, label 2 no positive.
  const mm::LabelMatrix y = {{1, 1, 0}, {0, 1, 0}, {1, 1, 0}};
  const mm::ScoreMatrix s = {{0.9, 0.6, 0.2}, {0.4, 0.3, 0.7}, {0.4, 0.8, 0.1}};
  const mm::MultiLabelReport r = mm::evaluate_multilabel(y, s, 0.5, {1, 5});
  CHECK(r.samples == 3);
  CHECK(r.labels == 3);
  // Label 0: positives 0.9, 0.4 vs negative 0.4 -> (1 + 0.5) / 2.
  CHECK(*r.auc_per_label[0] == doctest::Approx(0.75));
  CHECK(*r.auc_macro == doctest::Approx(0.75));
  CHECK(r.auc_skipped_labels == std::vector<int>{1, 2});
  // AP label 0: threshold 0.9 P=1 R=1/2; threshold 0.4 P=2/3 R=1 -> 1/2 + 1/3. Label 1: 1.
  CHECK(*r.ap_macro == doctest::Approx((5.0 / 6 + 1.0) / 2));
  CHECK(r.ap_skipped_labels == std::vector<int>{2});
  // Micro AUC over 9 pairs: positives {0.9,0.4,0.6,0.3,0.8}, negatives {0.4,0.2,0.7,0.1}.
  // Wins: 0.9:4, 0.4:2.5, 0.6:3, 0.3:2, 0.8:4 -> 15.5 / 20.
  CHECK(*r.auc_micro == doctest::Approx(15.5 / 20));
  // Predictions at 0.5: label 0 {1,0,0}: tp1 fn1; label 1 {1,0,1}: tp2 fn1; label 2 {0,1,0}: fp1.
  CHECK(r.f1_per_label[0] == doctest::Approx(2.0 / 3));
  CHECK(r.f1_per_label[1] == doctest::Approx(4.0 / 5));
  CHECK(r.f1_per_label[2] == 0.0);
  CHECK(r.f1_macro == doctest::Approx((2.0 / 3 + 0.8) / 3));
  CHECK(r.f1_micro == doctest::Approx(6.0 / (6 + 1 + 2)));
  CHECK(r.precision_macro == doctest::Approx((1 + 1 + 0) / 3.0));
  CHECK(r.precision_micro == doctest::Approx(3.0 / 4));
  CHECK(r.recall_macro == doctest::Approx((0.5 + 2.0 / 3 + 0) / 3));
  CHECK(r.recall_micro == doctest::Approx(3.0 / 5));
  CHECK(r.hamming_loss == doctest::Approx(3.0 / 9));
  REQUIRE(r.at_k.size() == 2);
  CHECK(r.at_k[0].k == 1);
  // Top-1: 0, 2, 1 -> hits 1, 0, 1.
  CHECK(*r.at_k[0].precision == doctest::Approx(2.0 / 3));
  CHECK(*r.at_k[0].recall == doctest::Approx((0.5 + 0 + 0.5) / 3));
  // k = 5 > 3 labels: every label taken, divided by 5.
  CHECK(*r.at_k[1].precision == doctest::Approx((2.0 + 1 + 2) / 5 / 3));
  CHECK(*r.at_k[1].recall == doctest::Approx(1.0));
}

TEST_CASE("evaluate_multilabel: a single sample, undefined micro values") {
  const mm::MultiLabelReport one = mm::evaluate_multilabel({{0, 1}}, {{0.3, 0.6}}, 0.5, {1});
  CHECK_FALSE(one.auc_macro.has_value());
  CHECK(one.auc_skipped_labels == std::vector<int>{0, 1});
  CHECK(*one.auc_micro == doctest::Approx(1.0));
  CHECK(*one.ap_macro == doctest::Approx(1.0));
  CHECK(one.ap_skipped_labels == std::vector<int>{0});
  CHECK(*one.at_k[0].precision == 1.0);
  CHECK(one.f1_macro == doctest::Approx(0.5));

  const mm::MultiLabelReport none = mm::evaluate_multilabel({{0, 0}, {0, 0}}, {{0.3, 0.6}, {1, 2}});
  CHECK_FALSE(none.auc_micro.has_value());
  CHECK_FALSE(none.ap_micro.has_value());
  CHECK_FALSE(none.ap_macro.has_value());
  CHECK(none.at_k.size() == 3);  // default ks 1, 2, 5
  CHECK(*none.at_k[0].precision == 0.0);
  CHECK_FALSE(none.at_k[0].recall.has_value());
}

TEST_CASE("evaluate_multilabel: bad arguments throw") {
  CHECK_THROWS_AS(mm::evaluate_multilabel({}, {}), std::invalid_argument);
  CHECK_THROWS_AS(mm::evaluate_multilabel({{1, 0}}, {{0.1}}), std::invalid_argument);
  CHECK_THROWS_AS(mm::evaluate_multilabel({{2}}, {{0.1}}), std::invalid_argument);
  CHECK_THROWS_AS(mm::evaluate_multilabel({{1}}, {{std::nan("")}}), std::invalid_argument);
  CHECK_THROWS_AS(mm::evaluate_multilabel({{1}}, {{0.1}}, 0.5, {0}), std::invalid_argument);
  CHECK_THROWS_AS(mm::evaluate_multilabel({{1, 0}, {1}}, {{0.1, 0.2}, {0.1}}),
                  std::invalid_argument);
}

TEST_CASE("accuracy with a mask, sequence accuracy, argmax") {
  CHECK(*mm::accuracy({1, 2, 3, 4}, {1, 0, 3, 0}) == doctest::Approx(0.5));
  // Positions 1 and 3 are masked out (0): 2 of the 2 counted positions are right.
  CHECK(*mm::accuracy({1, 2, 3, 4}, {1, 0, 3, 0}, {1, 0, 1, 0}) == doctest::Approx(1.0));
  CHECK(*mm::accuracy({1, 2, 3, 4}, {0, 2, 3, 0}, {1, 1, 0, 0}) == doctest::Approx(0.5));
  CHECK_FALSE(mm::accuracy({1, 2}, {1, 2}, {0, 0}).has_value());
  CHECK_THROWS_AS(mm::accuracy({1, 2}, {1}), std::invalid_argument);
  CHECK_THROWS_AS(mm::accuracy({1, 2}, {1, 2}, {1}), std::invalid_argument);

  // Sequence 0 right where counted; sequence 1 wrong at a counted position; sequence 2 fully
  // masked (left out).
  const std::vector<std::vector<int>> pred = {{1, 9}, {1, 2}, {5}};
  const std::vector<std::vector<int>> target = {{1, 2}, {1, 3}, {6}};
  CHECK(*mm::sequence_accuracy(pred, target, {{1, 0}, {1, 1}, {0}}) == doctest::Approx(0.5));
  CHECK(*mm::sequence_accuracy(pred, target) == doctest::Approx(0.0));

  CHECK(mm::argmax({0.1, 0.7, 0.7, 0.2}) == 1);
  CHECK(mm::argmax({-1}) == 0);
}

TEST_CASE("bAbI: per-task error, mean error, failed tasks over 5%") {
  const mm::BabiSummary s = mm::summarize_babi({{1, {1000, 1000}},  // 0%
                                                {2, {950, 1000}},   // 5%: not failed (> 5% fails)
                                                {3, {949, 1000}},   // 5.1%: failed
                                                {4, {100, 200}}});  // 50%: failed
  CHECK(s.task_error_percent.at(1) == 0.0);
  CHECK(s.task_error_percent.at(2) == doctest::Approx(5.0));
  CHECK(s.task_error_percent.at(3) == doctest::Approx(5.1));
  CHECK(s.task_error_percent.at(4) == doctest::Approx(50.0));
  CHECK(s.mean_error == doctest::Approx((0 + 5 + 5.1 + 50) / 4));
  CHECK(s.failed_tasks == 2);
  CHECK_THROWS_AS(mm::summarize_babi({}), std::invalid_argument);
  CHECK_THROWS_AS(mm::summarize_babi({{1, {3, 2}}}), std::invalid_argument);
  CHECK_THROWS_AS(mm::summarize_babi({{1, {0, 0}}}), std::invalid_argument);
}

TEST_CASE("read_matrix_file: CSV with and without a header, JSONL") {
  TempFiles files;
  const mm::Table plain = mm::read_matrix_file(files.write("a.csv", "0.5,1,-2e-3\n\n 3 , 4,5\r\n"));
  REQUIRE(plain.rows.size() == 2);
  CHECK(plain.rows[0] == std::vector<double>{0.5, 1, -2e-3});
  CHECK(plain.rows[1] == std::vector<double>{3, 4, 5});
  CHECK(plain.lines == std::vector<std::size_t>{1, 3});

  const mm::Table header = mm::read_matrix_file(files.write("b.csv", "\"a\",b,c\n1,0,1\n"));
  REQUIRE(header.rows.size() == 1);
  CHECK(header.lines[0] == 2);
  CHECK(mm::to_labels(header) == mm::LabelMatrix{{1, 0, 1}});

  const mm::Table bom = mm::read_matrix_file(files.write("bom.csv",
                                                         "\xEF\xBB\xBF"
                                                         "0.5,2\n"));
  CHECK(bom.rows == std::vector<std::vector<double>>{{0.5, 2}});
  // A first row with some numbers is data, so its other cells are errors, not a header.
  CHECK_THROWS_WITH_AS(mm::read_matrix_file(files.write("mixed.csv", "id,1\n0,1\n")),
                       (files.path("mixed.csv") +
                        ":1: column 1: not a number: 'id' (a first row is a header only when "
                        "every cell is a name)")
                           .c_str(),
                       mm::DataError);

  const mm::Table jsonl = mm::read_matrix_file(files.write("c.jsonl", "[0.25, 1]\n[2, 3e1]\n"));
  CHECK(jsonl.rows == std::vector<std::vector<double>>{{0.25, 1}, {2, 30}});
  const mm::Table jsonl_header =
      mm::read_matrix_file(files.write("d.jsonl", "[\"x\", \"y\"]\n[1, 0]\n"));
  CHECK(jsonl_header.rows == std::vector<std::vector<double>>{{1, 0}});
}

TEST_CASE("read_matrix: one header rule for CSV and JSONL, and the header is kept for a note") {
  auto read = [](const std::string& text, mm::Format f) {
    std::istringstream in(text);
    return mm::read_matrix(in, "f", f);
  };
  // Names make a header in both formats.
  const mm::Table csv = read("a, \"b c\" ,x1\n1,0,1\n", mm::Format::csv);
  CHECK(csv.header == std::vector<std::string>{"a", "\"b c\"", "x1"});
  CHECK(csv.header_line == 1);
  CHECK(csv.rows.size() == 1);
  CHECK(mm::header_note(csv) == "f:1: header row of 3 names skipped ('a', '\"b c\"', 'x1')");
  const mm::Table jsonl = read("\n[\"a\", \"b\"]\n[1, 0]\n", mm::Format::jsonl);
  CHECK(jsonl.header_line == 2);
  CHECK(mm::header_note(jsonl) == "f:2: header row of 2 names skipped ('\"a\"', '\"b\"')");
  // No header: no note.
  const mm::Table plain = read("1,0\n", mm::Format::csv);
  CHECK(plain.header.empty());
  CHECK(mm::header_note(plain).empty());
  // A wide header is named by its first five names.
  CHECK(mm::header_note(read("a,b,c,d,e,f,g\n1,1,1,1,1,1,1\n", mm::Format::csv)) ==
        "f:1: header row of 7 names skipped ('a', 'b', 'c', 'd', 'e', ...)");

  // true/false/null are neither numbers nor names: an error on line 1 in both formats (CSV used
  // to skip `true,false` as a header while JSONL refused it).
  auto error = [&](const std::string& text, mm::Format f) {
    try {
      read(text, f);
    } catch (const mm::DataError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string hint = " (labels are 0 or 1, scores numbers)";
  CHECK(error("true,false\n1,0\n", mm::Format::csv) ==
        "f:1: column 1: not a number: 'true'" + hint);
  CHECK(error("TRUE,False\n1,0\n", mm::Format::csv) ==
        "f:1: column 1: not a number: 'TRUE'" + hint);
  CHECK(error("[true,false]\n[1,0]\n", mm::Format::jsonl) ==
        "f:1: column 1: not a number: 'true'" + hint);
  CHECK(error("[\"true\",\"false\"]\n[1,0]\n", mm::Format::jsonl) ==
        "f:1: column 1: not a number: '\"true\"'" + hint);
  CHECK(error("null,a\n1,0\n", mm::Format::csv) == "f:1: column 1: not a number: 'null'" + hint);
  // An empty cell is not a name either; nor is a number written as a string in JSONL.
  CHECK(error("a,,c\n1,0,1\n", mm::Format::csv) ==
        "f:1: column 1: not a number: 'a' (a first row is a header only when every cell is a "
        "name)");
  CHECK(error("[\"a\",\"1\"]\n[1,0]\n", mm::Format::jsonl) ==
        "f:1: column 1: not a number: '\"a\"' (a first row is a header only when every cell is a "
        "name)");
  CHECK(error("nan,inf\n1,0\n", mm::Format::csv) == "f:1: column 1: value is not finite: 'nan'");
}

TEST_CASE("read_matrix: values in messages are quoted, escaped and cut") {
  auto error = [](const std::string& text, mm::Format f) {
    std::istringstream in(text);
    try {
      mm::read_matrix(in, "f", f);
    } catch (const mm::DataError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error("1,2\n1,\x1b[2J\x07\n", mm::Format::csv) ==
        "f:2: column 2: not a number: '\\x1b[2J\\x07'");
  CHECK(error("1,2\n1,caf\xe9\n", mm::Format::csv) == "f:2: column 2: not a number: 'caf\\xe9'");
  const std::string big(5 * 1024 * 1024, 'x');
  std::string e = error("1,2\n1," + big + "\n", mm::Format::csv);
  CHECK(e == "f:2: column 2: not a number: '" + std::string(60, 'x') + "...' (5242880 bytes)");
  // JSON: a 5 MB string cell, a 5 MB object, and a parse error inside a 5 MB string.
  e = error("[1,2]\n[1,\"" + big + "\"]\n", mm::Format::jsonl);
  CHECK(e == "f:2: column 2: not a number: '\"" + std::string(59, 'x') + "...' (5242882 bytes)");
  e = error("[1,2]\n{\"a\":\"" + big + "\"}\n", mm::Format::jsonl);
  CHECK(e.rfind("f:2: expected a JSON array, found '{\"a\":\"xxx", 0) == 0);
  CHECK(e.size() < 120);
  e = error("[1,2]\n[1,\"" + big + "\x01\"]\n", mm::Format::jsonl);
  CHECK(e.rfind("f:2: invalid JSON: [json.exception.parse_error.101]", 0) == 0);
  CHECK(e.size() < 260);
  CHECK(e.find('\x01') == std::string::npos);
}

TEST_CASE("read_matrix_file: bad input names the file and line") {
  CHECK(read_error("s.csv", "1,2,3\n1,2,3\n\n1,2\n") == "s.csv:4: expected 3 columns, found 2");
  CHECK(read_error("s.csv", "1,2\n1,x\n") == "s.csv:2: column 2: not a number: 'x'");
  CHECK(read_error("s.csv", "1,2\n1,\n") == "s.csv:2: column 2: not a number: ''");
  CHECK(read_error("s.csv", "1,nan\n") == "s.csv:1: column 2: value is not finite: 'nan'");
  CHECK(read_error("s.csv", "1,2\n-inf,1\n") == "s.csv:2: column 1: value is not finite: '-inf'");
  CHECK(read_error("s.csv", "1,1e999\n") == "s.csv:1: column 2: value is not finite: '1e999'");
  CHECK(read_error("l.csv", "1,0\n0,0.5\n") ==
        "l.csv:2: column 2: label must be 0 or 1, found 0.5");
  CHECK(read_error("l.csv", "1,0\n2,0\n") == "l.csv:2: column 1: label must be 0 or 1, found 2");
  CHECK(read_error("e.csv", "") == "e.csv: empty file (no data rows)");
  CHECK(read_error("e.csv", "\n  \n") == "e.csv: empty file (no data rows)");
  CHECK(read_error("h.csv", "a,b\n") == "h.csv: no data rows after the header");
  CHECK(read_error("j.jsonl", "[1, 0]\n[1, \"a\"]\n") ==
        "j.jsonl:2: column 2: not a number: '\"a\"'");
  CHECK(read_error("j.jsonl", "[1, 0]\n[1]\n") == "j.jsonl:2: expected 2 columns, found 1");
  CHECK(
      read_error("j.jsonl", "[1, 0]\n{\"a\": 1}\n").rfind("j.jsonl:2: expected a JSON array", 0) ==
      0);
  CHECK(read_error("j.jsonl", "[1, 0]\n[1, 0\n").rfind("j.jsonl:2: invalid JSON", 0) == 0);

  TempFiles files;
  const std::string missing = files.path("missing.csv");
  CHECK_THROWS_WITH_AS(mm::read_matrix_file(missing),
                       (missing + ": cannot open file (No such file or directory)").c_str(),
                       mm::DataError);
}

TEST_CASE("check_same_shape: row and column counts must match") {
  TempFiles files;
  const mm::Table labels = mm::read_matrix_file(files.write("labels.csv", "1,0\n0,1\n1,1\n"));
  const mm::Table fewer = mm::read_matrix_file(files.write("fewer.csv", "0.1,0.2\n0.3,0.4\n"));
  const mm::Table narrow = mm::read_matrix_file(files.write("narrow.csv", "x\n0.1\n0.3\n0.4\n"));
  const mm::Table same = mm::read_matrix_file(files.write("same.csv", "1,2\n3,4\n5,6\n"));
  CHECK_NOTHROW(mm::check_same_shape(labels, same));
  CHECK_THROWS_WITH_AS(mm::check_same_shape(labels, fewer),
                       (fewer.path + ": 2 data rows, but " + labels.path + " has 3").c_str(),
                       mm::DataError);
  CHECK_THROWS_WITH_AS(
      mm::check_same_shape(labels, narrow),
      (narrow.path + ":2: expected 2 columns (as in " + labels.path + "), found 1").c_str(),
      mm::DataError);
}
