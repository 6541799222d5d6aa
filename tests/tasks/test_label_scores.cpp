// Per-label score files (tasks/label_scores.hpp) and the bootstrap over notes of multi-label
// metrics (tasks/multilabel_bootstrap.hpp): a hand-computed case, every resample's weighted value
// against evaluate_multilabel on the drawn rows, the intervals against a brute-force bootstrap,
// and bad files named by file and line.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "tasks/label_scores.hpp"
#include "tasks/metrics.hpp"
#include "tasks/multilabel_bootstrap.hpp"
#include "tests/test_util.hpp"

using namespace memgrad;
using namespace memgrad::metrics;

namespace {

// Four notes, labels a and b. Label a: gold 1 0 1 0, scores 2 1 0 -1: the positives (2, 0) beat
// 3 of the 4 negatives' pairs, AUC 0.75. Label b: gold 0 1 1 0, scores 0 0 1 -2: pairs
// (0 vs 0) 1/2, (0 vs -2) 1, (1 vs 0) 1, (1 vs -2) 1, AUC 3.5/4 = 0.875. Macro 0.8125. Micro, all
// 16 pairs of positives {2, 0, 0, 1} and negatives {1, -1, 0, -2}: 4 + 2.5 + 2.5 + 3.5 = 12.5,
// 0.78125. P@1: note 1 a (gold), 2 a (not), 3 b (gold), 4 a (not): 0.5. P@5 (divisor 5, two
// labels): hits 1, 1, 2, 0 -> 4 / 20 = 0.2.
const LabelMatrix kGold = {{1, 0}, {0, 1}, {1, 1}, {0, 0}};
const ScoreMatrix kScores = {{2, 0}, {1, 0}, {0, 1}, {-1, -2}};

LabelScoreSplit split_of(const std::string& name, const LabelMatrix& gold,
                         const ScoreMatrix& scores) {
  LabelScoreSplit s{.name = name, .codes = {"a", "b"}, .gold = gold, .scores = scores};
  const char* names[] = {"n1", "n2", "n3", "n4"};
  for (size_t i = 0; i < gold.size(); ++i) s.records.push_back(names[i]);
  return s;
}

// A random multi-label problem with ties (scores on a coarse grid).
void random_problem(std::mt19937_64& rng, size_t n, size_t L, LabelMatrix& gold,
                    ScoreMatrix& scores) {
  gold.assign(n, std::vector<int>(L, 0));
  scores.assign(n, std::vector<double>(L, 0));
  for (size_t i = 0; i < n; ++i)
    for (size_t l = 0; l < L; ++l) {
      gold[i][l] = rng() % 4 == 0;
      scores[i][l] = double(rng() % 7) / 7 + 0.3 * gold[i][l];
    }
}

}  // namespace

TEST_CASE("multi-label bootstrap: the hand-computed values, and weights that repeat rows") {
  const WeightedMultiLabel w1(kGold, kScores, 1), w5(kGold, kScores, 5);
  const std::vector<double> ones(4, 1.0);
  CHECK(*w1.value(MultiLabelMetric::auc_macro, ones) == 0.8125);
  CHECK(*w1.value(MultiLabelMetric::auc_micro, ones) == 0.78125);
  CHECK(*w1.value(MultiLabelMetric::p_at_k, ones) == 0.5);
  CHECK(*w5.value(MultiLabelMetric::p_at_k, ones) == doctest::Approx(0.2).epsilon(1e-15));
  const MultiLabelReport r = evaluate_multilabel(kGold, kScores, 0.5, {1});
  CHECK(*r.auc_macro == 0.8125);
  CHECK(*r.auc_micro == 0.78125);
  // Notes 1 and 2 only (weights 1 1 0 0): label a has gold 1 0 (AUC 1), b 0 1 (tie: 0.5).
  CHECK(*w1.value(MultiLabelMetric::auc_macro, {1, 1, 0, 0}) == 0.75);
  // Note 4 alone: no label has a positive; macro and micro AUC undefined, P@1 0.
  CHECK(!w1.value(MultiLabelMetric::auc_macro, {0, 0, 0, 3}));
  CHECK(!w1.value(MultiLabelMetric::auc_micro, {0, 0, 0, 3}));
  CHECK(*w1.value(MultiLabelMetric::p_at_k, {0, 0, 0, 3}) == 0);
  CHECK_THROWS_AS(w1.value(MultiLabelMetric::p_at_k, {1, 1}), std::invalid_argument);
  CHECK_THROWS_AS(WeightedMultiLabel(kGold, kScores, 0), std::invalid_argument);
}

TEST_CASE("multi-label bootstrap: each resample equals evaluate_multilabel on the drawn rows") {
  std::mt19937_64 rng(5);
  LabelMatrix gold;
  ScoreMatrix a, b;
  random_problem(rng, 23, 6, gold, a);
  LabelMatrix unused;
  random_problem(rng, 23, 6, unused, b);
  const WeightedMultiLabel wa(gold, a, 3), wb(gold, b, 3);
  // The brute force: gather the drawn rows, evaluate_multilabel on them.
  auto brute = [&](const ScoreMatrix& s, const std::vector<size_t>& idx,
                   MultiLabelMetric m) -> std::optional<double> {
    LabelMatrix g;
    ScoreMatrix x;
    for (size_t i : idx) g.push_back(gold[i]), x.push_back(s[i]);
    const MultiLabelReport r = evaluate_multilabel(g, x, 0.5, {3});
    return m == MultiLabelMetric::auc_macro   ? r.auc_macro
           : m == MultiLabelMetric::auc_micro ? r.auc_micro
                                              : r.at_k[0].precision;
  };
  for (const MultiLabelMetric m :
       {MultiLabelMetric::auc_macro, MultiLabelMetric::auc_micro, MultiLabelMetric::p_at_k}) {
    // The interval of A - B against percentile_bootstrap over the brute-force values.
    const BootstrapInterval fast = multilabel_bootstrap_interval({&wa}, {&wb}, m, 300, 11, 0.9);
    const BootstrapInterval slow =
        percentile_bootstrap(23, 300, 11, 0.9, [&](const std::vector<size_t>& idx) {
          const auto x = brute(a, idx, m), y = brute(b, idx, m);
          return x && y ? std::optional<double>(*x - *y) : std::nullopt;
        });
    CHECK(fast.low == doctest::Approx(slow.low).epsilon(1e-12));
    CHECK(fast.high == doctest::Approx(slow.high).epsilon(1e-12));
    CHECK(fast.used == slow.used);
    CHECK(fast.skipped == slow.skipped);
    CHECK(fast.low < fast.high);
    // A group of two models: the mean of their metrics on each resample.
    const BootstrapInterval mean = multilabel_bootstrap_interval({&wa, &wb}, {}, m, 200, 3);
    const BootstrapInterval mean_slow =
        percentile_bootstrap(23, 200, 3, 0.95, [&](const std::vector<size_t>& idx) {
          const auto x = brute(a, idx, m), y = brute(b, idx, m);
          return x && y ? std::optional<double>((*x + *y) / 2) : std::nullopt;
        });
    CHECK(mean.low == doctest::Approx(mean_slow.low).epsilon(1e-12));
    CHECK(mean.high == doctest::Approx(mean_slow.high).epsilon(1e-12));
    // A model against itself: 0 on every resample.
    const BootstrapInterval same = multilabel_bootstrap_interval({&wa}, {&wa}, m, 50);
    CHECK(same.low == 0);
    CHECK(same.high == 0);
  }
  const WeightedMultiLabel small(kGold, kScores, 1);
  CHECK_THROWS_AS(multilabel_bootstrap_interval({&wa}, {&small}, MultiLabelMetric::p_at_k),
                  std::invalid_argument);
}

TEST_CASE("label scores files: written and read back exactly; bad lines named") {
  test::TempDir tmp;
  ScoreMatrix odd = kScores;
  odd[0][1] = 0.1 + 1e-17 * 3;  // 17 significant digits read back exactly
  const std::vector<LabelScoreSplit> splits = {split_of("test", kGold, odd),
                                               split_of("dev", {{0, 1}}, {{-0.5, 3.25}})};
  const std::string text = label_scores_csv(splits);
  CHECK(text.rfind("record_id,split,code,gold,score\nn1,test,a,1,2\nn1,test,b,0,", 0) == 0);
  const std::string path = tmp.write("s.csv", text);
  CHECK(is_label_scores_file(path));
  const std::vector<LabelScoreSplit> back = read_label_scores(path);
  REQUIRE(back.size() == 2);
  CHECK(back[0].name == "test");
  CHECK(back[0].codes == std::vector<std::string>{"a", "b"});
  CHECK(back[0].records == std::vector<std::string>{"n1", "n2", "n3", "n4"});
  CHECK(back[0].gold == kGold);
  CHECK(back[0].scores == odd);
  CHECK(back[0].line(2, 1) == 7);  // note n3's label b: header, then 2 lines per note
  CHECK(back[1].records == std::vector<std::string>{"n1"});
  CHECK(back[1].scores[0][1] == 3.25);

  auto error_of = [&](const std::string& name, const std::string& body) {
    const std::string p = tmp.write(name, body);
    try {
      read_label_scores(p);
    } catch (const DataError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string h = "record_id,split,code,gold,score\n";
  CHECK(error_of("h.csv", "record_id,split,label,score\n1,test,0,0.5\n") ==
        tmp.path.string() +
            "/h.csv:1: the header must be 'record_id,split,code,gold,score', got "
            "'record_id,split,label,score'");
  CHECK(error_of("f.csv", h + "n1,test,a,1\n") ==
        tmp.path.string() +
            "/f.csv:2: expected 5 fields (record_id,split,code,gold,score), got 4 "
            "in 'n1,test,a,1'");
  CHECK(error_of("g.csv", h + "n1,test,a,2,0\n") ==
        tmp.path.string() + "/g.csv:2: gold must be 0 or 1, got '2'");
  CHECK(error_of("s.csv", h + "n1,test,a,1,inf\n") ==
        tmp.path.string() + "/s.csv:2: score must be a finite number, got 'inf'");
  CHECK(error_of("d.csv", h + "n1,test,a,1,0\nn1,test,a,0,1\n") ==
        tmp.path.string() + "/d.csv:3: label 'a' twice for record 'n1'");
  CHECK(error_of("o.csv", h + "n1,test,a,1,0\nn1,test,b,0,1\nn2,test,b,1,0\nn2,test,a,0,1\n") ==
        tmp.path.string() +
            "/o.csv:4: label 'b' of record 'n2' where record 'n1' (line 2) has label 'a' (every "
            "note of a split needs the same labels in the same order)");
  CHECK(error_of("m.csv", h + "n1,test,a,1,0\nn1,test,b,0,1\nn2,test,a,1,0\nn3,test,a,0,1\n") ==
        tmp.path.string() + "/m.csv:4: record 'n2' has 1 labels, record 'n1' (line 2) 2");
  CHECK(error_of("t.csv", h + "n1,test,a,1,0\nn1,test,b,0,1\nn2,test,a,1,0\n") ==
        tmp.path.string() + "/t.csv:4: record 'n2' has 1 labels, record 'n1' (line 2) 2");
  CHECK(error_of("r.csv", h + "n1,test,a,1,0\nn2,test,a,1,0\nn1,test,a,0,1\n") ==
        tmp.path.string() +
            "/r.csv:4: record 'n1' of split 'test' again after other records (a note's lines "
            "must be together)");
  CHECK(error_of("p.csv", h + "n1,test,a,1,0\nn1,dev,a,1,0\nn2,test,a,0,1\n") ==
        tmp.path.string() +
            "/p.csv:4: split 'test' again after split 'dev' (a split's lines must be together)");
  CHECK(error_of("e.csv", h) == tmp.path.string() + "/e.csv:1: no note");
  CHECK(error_of("z.csv", "") == tmp.path.string() + "/z.csv: empty file (no header)");
  CHECK(!is_label_scores_file((tmp.path / "absent.csv").string()));
}
