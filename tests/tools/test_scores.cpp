// Per-example scores (`memgrad eval --scores`) of a run on the hand-made PhysioNet data, and
// `memgrad metrics bootstrap` on them and on hand-written files: intervals that agree with
// metrics.json's, the paired bootstrap's known answers (identical scores: 0, [0, 0]; a perfect
// ranking against its reverse: 1, [1, 1]), and bad files named by file and line with exit code 2.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "engine/json_text.hpp"
#include "tasks/example_scores.hpp"
#include "tasks/metrics.hpp"
#include "tests/tasks/physionet_fixture.hpp"
#include "tests/test_util.hpp"
#include "tests/tools/cli_run.hpp"
#include "tests/tools/train_util.hpp"
#include "tools/commands.hpp"

using namespace memgrad;
using namespace memgrad::cli;
using memgrad::test::read_json;
using memgrad::test::Run;
using memgrad::test::run;
using memgrad::test::TempDir;
namespace fs = std::filesystem;

namespace {

// A scores file of ten set_b stays 1..10 with these labels and scores.
std::string scores_file(const TempDir& tmp, const std::string& name,
                        const std::vector<double>& scores) {
  const int labels[10] = {0, 1, 0, 1, 1, 0, 0, 1, 0, 0};
  std::vector<ExampleScore> rows;
  for (int i = 0; i < 10; ++i)
    rows.push_back({std::to_string(i + 1), "set_b", labels[i], scores[size_t(i)], 0});
  return tmp.write(name, example_scores_csv(rows));
}

const std::vector<double> kPerfect = {0, 1, 0, 1, 1, 0, 0, 1, 0, 0};
const std::vector<double> kReversed = {1, 0, 1, 0, 0, 1, 1, 0, 1, 1};
const std::vector<double> kNoisy = {0.1, 0.4, 0.35, 0.8, 0.2, 0.7, 0.3, 0.9, 0.5, 0.05};

}  // namespace

TEST_CASE("eval --scores writes every evaluated stay; bootstrap agrees with metrics.json") {
  TempDir tmp;
  const auto data = memgrad::test::physionet::make_data(tmp);
  const fs::path out = tmp.path / "run";
  REQUIRE(cmd_train(memgrad::test::with_words(memgrad::test::physionet_run(data.dir, out),
                                              {"--epochs", "2"})) == 0);
  const std::string file = (tmp.path / "scores.csv").string();
  const Run e = run(cmd_eval, {"--checkpoint", out.string(), "--scores", file, "--json"});
  REQUIRE(e.code == 0);
  const nlohmann::json metrics = parse_json(e.out);
  const std::vector<ExampleScore> rows = read_example_scores(file);
  REQUIRE(rows.size() == 8 + 8 + 8);  // valid, test (0.2 of 40 each) and set-b's 8
  for (const char* split : {"valid", "test", "set_b"}) {
    std::vector<int> labels;
    std::vector<double> scores;
    for (const ExampleScore& r : rows)
      if (r.split == split) labels.push_back(r.label), scores.push_back(r.score);
    REQUIRE(labels.size() == 8);
    CHECK(*metrics::auc_roc(labels, scores) == metrics[split]["auc_roc"].get<double>());
    CHECK(*metrics::average_precision(labels, scores) == metrics[split]["auc_pr"].get<double>());
  }
  CHECK(rows[16].record_id == "142001");  // set-b in RecordID order, after valid and test
  CHECK(rows[16].label == data.b_deaths[0]);
  CHECK(rows[17].label == data.b_deaths[1]);
  // The same resamples as metrics.json's (bootstrap_resamples 20, bootstrap_seed 1).
  const nlohmann::json saved = read_json(out / "metrics.json");
  const Run b = run(cmd_metrics, {"bootstrap", "--scores", file, "--resamples", "20"});
  REQUIRE(b.code == 0);
  const auto j = parse_json(b.out);
  CHECK(j["examples"] == 8);
  CHECK(j["a"]["auc_roc"].get<double>() == saved["set_b"]["auc_roc"].get<double>());
  CHECK(j["a"]["auc_roc_ci"] == saved["set_b"]["auc_roc_ci95"]);
  CHECK(j["a"]["auc_pr_ci"] == saved["set_b"]["auc_pr_ci95"]);
  // A model against itself: difference 0, interval [0, 0].
  const Run p = run(cmd_metrics, {"bootstrap", "--scores", file, "--versus", file, "--split",
                                  "valid", "--format", "table"});
  REQUIRE(p.code == 0);
  CHECK(test::contains(p.out, "A - B"));
  CHECK(test::contains(p.out, "AUC-ROC 0.0000 [0.0000, 0.0000]  AUC-PR 0.0000 [0.0000, 0.0000]"));
}

TEST_CASE("metrics bootstrap: paired intervals with known answers, seeded") {
  TempDir tmp;
  const std::string perfect = scores_file(tmp, "perfect.csv", kPerfect);
  const std::string reversed = scores_file(tmp, "reversed.csv", kReversed);
  const std::string noisy = scores_file(tmp, "noisy.csv", kNoisy);
  const Run r = run(cmd_metrics, {"bootstrap", "--scores", perfect, "--versus", reversed});
  REQUIRE(r.code == 0);
  const auto j = parse_json(r.out);
  CHECK(j["a"]["auc_roc"] == 1.0);
  CHECK(j["b"]["auc_roc"] == 0.0);
  CHECK(j["difference"]["auc_roc"] == 1.0);
  CHECK(j["difference"]["auc_roc_ci"] == nlohmann::json::array({1.0, 1.0}));
  CHECK(j["a"]["auc_roc_ci"] == nlohmann::json::array({1.0, 1.0}));
  CHECK(j["positives"] == 4);
  // Lists: a group's metric is the mean of its files' (perfect and reversed: 0.5 on every
  // resample); a group against itself differs by 0 on every resample.
  const Run g = run(cmd_metrics, {"bootstrap", "--scores", perfect + "," + reversed});
  REQUIRE(g.code == 0);
  const auto gj = parse_json(g.out);
  CHECK(gj["a"]["auc_roc"] == 0.5);
  CHECK(gj["a"]["auc_roc_ci"] == nlohmann::json::array({0.5, 0.5}));
  CHECK(gj["a"]["files"].size() == 2);
  const Run h = run(cmd_metrics, {"bootstrap", "--scores", noisy + "," + perfect, "--versus",
                                  perfect + "," + noisy});
  REQUIRE(h.code == 0);
  const auto hj = parse_json(h.out);
  CHECK(hj["difference"]["auc_pr"] == 0.0);
  CHECK(hj["difference"]["auc_pr_ci"] == nlohmann::json::array({0.0, 0.0}));
  CHECK(run(cmd_metrics, {"bootstrap", "--scores", noisy + ",,"}).code == 2);
  // Same seed, same numbers; the single intervals are the library's with that seed.
  const Run again = run(cmd_metrics, {"bootstrap", "--scores", noisy, "--seed", "7"});
  const Run twice = run(cmd_metrics, {"bootstrap", "--scores", noisy, "--seed", "7"});
  REQUIRE(again.code == 0);
  CHECK(again.out == twice.out);
  const std::vector<int> labels = {0, 1, 0, 1, 1, 0, 0, 1, 0, 0};
  const auto ci = metrics::bootstrap_interval(labels, kNoisy, &metrics::auc_roc, 1000, 7);
  const auto k = parse_json(again.out);
  CHECK(k["a"]["auc_roc_ci"] == nlohmann::json::array({ci.low, ci.high}));
  // The paired interval of noisy - perfect lies below 0 and is narrower than the gap of the
  // unpaired intervals would suggest: it is of the difference on the same resamples.
  const auto d =
      metrics::paired_bootstrap_interval(labels, {kNoisy}, {kPerfect}, &metrics::auc_roc, 1000, 7);
  CHECK(d.high <= 0);
  CHECK(d.low >= -1);
  const auto same =
      metrics::paired_bootstrap_interval(labels, {kNoisy}, {kNoisy}, &metrics::average_precision);
  CHECK(same.low == 0);
  CHECK(same.high == 0);
}

TEST_CASE("metrics bootstrap: an empty item in a --scores or --versus list names the flag") {
  TempDir tmp;
  const std::string a = scores_file(tmp, "a.csv", kNoisy);
  const std::string b = scores_file(tmp, "b.csv", kPerfect);
  // A trailing comma used to be dropped silently here (std::getline gives no last empty item).
  for (const auto& [flag, words] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"--scores", {"bootstrap", "--scores", a + ","}},
           {"--scores", {"bootstrap", "--scores", "," + a}},
           {"--scores", {"bootstrap", "--scores", a + ",," + b}},
           {"--scores", {"bootstrap", "--scores", ""}},
           {"--versus", {"bootstrap", "--scores", a, "--versus", b + ","}},
           {"--versus", {"bootstrap", "--scores", a, "--versus", ""}}}) {
    CAPTURE(words.back());
    const Run r = run(cmd_metrics, words);
    CHECK(r.code == 2);
    CHECK(test::contains(r.error,
                         "option " + flag + " expects a comma-separated list without empty items"));
    CHECK(r.out.empty());
  }
}

TEST_CASE("metrics bootstrap: bad files are named by file and line, exit code 2") {
  TempDir tmp;
  const std::string good = scores_file(tmp, "good.csv", kNoisy);
  const std::string text = memgrad::test::read_text(good);
  // Line 4 (the third stay) with a label of 2.
  std::string bad_label = text;
  bad_label.replace(bad_label.find("3,set_b,0,"), 10, "3,set_b,2,");
  const std::string f1 = tmp.write("bad_label.csv", bad_label);
  Run r = run(cmd_metrics, {"bootstrap", "--scores", f1});
  CHECK(r.code == 2);
  CHECK(r.error == f1 + ":4: label must be 0 or 1, got '2'");
  CHECK(r.out.empty());
  // A line with three fields.
  const std::string f2 = tmp.write("short.csv", text + "11,set_b,0\n");
  r = run(cmd_metrics, {"bootstrap", "--scores", f2});
  CHECK(r.code == 2);
  CHECK(
      test::contains(r.error, f2 + ":12: expected 4 fields (record_id,split,label,score), got 3"));
  // A score that is not a number, a missing header, an absent split, a missing file.
  const std::string f3 = tmp.write("nan.csv", text + "11,set_b,0,nan\n");
  CHECK(run(cmd_metrics, {"bootstrap", "--scores", f3}).error ==
        f3 + ":12: score must be a finite number, got 'nan'");
  const std::string f4 = tmp.write("nohead.csv", text.substr(text.find('\n') + 1));
  CHECK(test::contains(run(cmd_metrics, {"bootstrap", "--scores", f4}).error,
                       f4 + ":1: the header must be 'record_id,split,label,score'"));
  r = run(cmd_metrics, {"bootstrap", "--scores", good, "--split", "test"});
  CHECK(r.code == 2);
  CHECK(r.error == good + ": no example of split 'test' (the file has set_b)");
  CHECK(run(cmd_metrics, {"bootstrap", "--scores", (tmp.path / "absent.csv").string()}).code == 2);
  // Paired files must hold the same stays in the same order: the first mismatch is named.
  std::string other = text;
  other.replace(other.find("\n3,set_b"), 8, "\n33,set_b");
  const std::string f5 = tmp.write("other.csv", other);
  r = run(cmd_metrics, {"bootstrap", "--scores", good, "--versus", f5});
  CHECK(r.code == 2);
  CHECK(test::contains(r.error, good + ":4: record '3' where " + f5 + ":4 has record '33'"));
  const std::string f6 = tmp.write("fewer.csv", text.substr(0, text.rfind("10,set_b")));
  r = run(cmd_metrics, {"bootstrap", "--scores", good, "--versus", f6});
  CHECK(r.code == 2);
  CHECK(r.error == good + " has 10 examples of split 'set_b', " + f6 + " 9");
  // Flags.
  CHECK(run(cmd_metrics, {"bootstrap"}).code == 2);
  CHECK(run(cmd_metrics, {"bootstrap", "--scores", good, "--resamples", "0"}).code == 2);
  CHECK(run(cmd_metrics, {"bootstrap", "--help"}).code == 0);
}
