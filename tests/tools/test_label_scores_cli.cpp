// `memgrad eval --scores` on the multi-label codiesp-kb task (a C-MemNN trained two epochs on the
// fixture notes and knowledge base): every test and dev note's logit per label, bootstrap point
// estimates equal to metrics.json's, dev P@5 on every epoch line; and `memgrad metrics
// bootstrap` on hand-written per-label files: known answers, mismatched files named by file and
// line with exit code 2.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/json_text.hpp"
#include "tasks/label_scores.hpp"
#include "tests/tasks/kb_fixture.hpp"
#include "tests/test_util.hpp"
#include "tests/tools/cli_run.hpp"
#include "tools/commands.hpp"

using namespace memgrad;
using namespace memgrad::cli;
using memgrad::test::Run;
using memgrad::test::run;
using memgrad::test::TempDir;
namespace fs = std::filesystem;

namespace {

// Five notes x three labels; scores from gold: `perfect` ranks every positive first, `reversed`
// last, `noisy` in between.
const std::vector<std::vector<int>> kGold = {{1, 0, 0}, {0, 1, 1}, {1, 1, 0}, {0, 0, 1}, {0, 1, 0}};

std::string file_of(const TempDir& tmp, const std::string& name, double sign, double noise,
                    std::vector<std::string> records = {"p1", "p2", "p3", "p4", "p5"},
                    std::vector<std::string> codes = {"i10", "r50.9", "e11.9"}) {
  LabelScoreSplit s{.name = "test", .codes = codes, .records = records, .gold = kGold};
  for (size_t i = 0; i < kGold.size(); ++i) {
    s.scores.emplace_back();
    for (size_t j = 0; j < 3; ++j)
      s.scores.back().push_back(sign * (kGold[i][j] - 0.5) + noise * double((i * 7 + j * 3) % 5));
  }
  return tmp.write(name, label_scores_csv({s}));
}

}  // namespace

TEST_CASE("eval --scores on codiesp-kb: per-label logits; bootstrap agrees with metrics.json") {
  const test::KbFixture fx;
  test::write_kb_notes(fx.dir);
  const fs::path out = fx.dir.path / "run";
  REQUIRE(cmd_train(test::kb_train_words(fx.dir, out.string(), "c-memnn", 3, 2)) == 0);
  // Every epoch line has the selection score and dev P@5.
  std::ifstream log(out / "log.jsonl");
  int epochs = 0;
  for (std::string line; std::getline(log, line);) {
    const auto j = parse_json(line);
    if (!j.contains("dev_auc_pr_micro")) continue;
    ++epochs;
    REQUIRE(j.contains("dev_p_at_5"));
    // Two dev notes of one gold label each among three labels: P@5 = 1/5.
    CHECK(j["dev_p_at_5"].get<double>() == doctest::Approx(0.2));
  }
  CHECK(epochs == 2);

  const std::string file = (fx.dir.path / "scores.csv").string();
  const Run e = run(cmd_eval, {"--checkpoint", out.string(), "--scores", file, "--json"});
  REQUIRE(e.code == 0);
  const auto metrics = parse_json(e.out);
  const std::vector<LabelScoreSplit> splits = read_label_scores(file);
  REQUIRE(splits.size() == 2);
  CHECK(splits[0].name == "test");
  CHECK(splits[0].records == std::vector<std::string>{"g", "h"});
  CHECK(splits[1].name == "dev");
  CHECK(splits[1].records == std::vector<std::string>{"e", "f"});
  REQUIRE(splits[0].codes.size() == 3);
  for (const LabelScoreSplit& s : splits)
    CHECK(s.codes == splits[0].codes);  // the label set's codes, as CodiEsp writes them
  const auto r50 = std::find(splits[0].codes.begin(), splits[0].codes.end(), "r50.9");
  REQUIRE(r50 != splits[0].codes.end());
  CHECK(splits[0].gold[0][size_t(r50 - splits[0].codes.begin())] == 1);  // g: fever
  CHECK(splits[0].gold[1][size_t(r50 - splits[0].codes.begin())] == 0);

  const Run b = run(cmd_metrics, {"bootstrap", "--scores", file, "--resamples", "50"});
  REQUIRE(b.code == 0);
  const auto j = parse_json(b.out);
  CHECK(j["split"] == "test");
  CHECK(j["notes"] == 2);
  CHECK(j["labels"] == 3);
  CHECK(j["a"]["auc_macro"].get<double>() == metrics["auc_macro"].get<double>());
  CHECK(j["a"]["auc_micro"].get<double>() == metrics["auc_micro"].get<double>());
  CHECK(j["a"]["p_at_5"].get<double>() == metrics["p_at_5"].get<double>());
  const Run d = run(cmd_metrics, {"bootstrap", "--scores", file, "--split", "dev"});
  REQUIRE(d.code == 0);
  const auto dj = parse_json(d.out);
  CHECK(dj["a"]["p_at_5"].get<double>() == metrics["dev"]["p_at_5"].get<double>());
  CHECK(dj["a"]["auc_micro"].get<double>() == metrics["dev"]["auc_micro"].get<double>());
}

TEST_CASE("metrics bootstrap on per-label files: known answers, pairs, seeds as means") {
  TempDir tmp;
  const std::string perfect = file_of(tmp, "perfect.csv", 1, 0);
  const std::string reversed = file_of(tmp, "reversed.csv", -1, 0);
  const std::string noisy = file_of(tmp, "noisy.csv", 1, 0.4);
  const Run r = run(cmd_metrics, {"bootstrap", "--scores", perfect, "--versus", reversed});
  REQUIRE(r.code == 0);
  const auto j = parse_json(r.out);
  CHECK(j["notes"] == 5);
  CHECK(j["labels"] == 3);
  CHECK(j["positives"] == 7);
  CHECK(j["a"]["auc_macro"] == 1.0);
  CHECK(j["b"]["auc_macro"] == 0.0);
  // Perfect against reversed: 1 on every resample where a label has both classes.
  CHECK(j["difference"]["auc_macro"] == 1.0);
  CHECK(j["difference"]["auc_macro_ci"] == nlohmann::json::array({1.0, 1.0}));
  CHECK(j["difference"]["auc_micro_ci"] == nlohmann::json::array({1.0, 1.0}));
  // P@5 with three labels: every note's positives are in its top 5, whatever the order.
  CHECK(j["difference"]["p_at_5"] == 0.0);
  CHECK(j["difference"]["p_at_5_ci"] == nlohmann::json::array({0.0, 0.0}));
  CHECK(j["a"]["p_at_5"].get<double>() == doctest::Approx(7.0 / 25));
  // A list is the mean over its files: perfect and reversed average to 0.5 on every resample.
  const Run g = run(cmd_metrics, {"bootstrap", "--scores", perfect + "," + reversed});
  REQUIRE(g.code == 0);
  const auto gj = parse_json(g.out);
  CHECK(gj["a"]["auc_macro"] == 0.5);
  CHECK(gj["a"]["auc_macro_ci"] == nlohmann::json::array({0.5, 0.5}));
  CHECK(gj["a"]["files"].size() == 2);
  // A noisy model: an interval around its value, the same numbers for the same seed, and P@1.
  const Run n1 = run(cmd_metrics, {"bootstrap", "--scores", noisy, "--seed", "3", "--k", "1",
                                   "--format", "table"});
  const Run n2 = run(cmd_metrics, {"bootstrap", "--scores", noisy, "--seed", "3", "--k", "1",
                                   "--format", "table"});
  REQUIRE(n1.code == 0);
  CHECK(n1.out == n2.out);
  CHECK(test::contains(n1.out, "5 notes, 3 labels (0 without both classes), 7 positives"));
  CHECK(test::contains(n1.out, "P@1"));
  const auto nj =
      parse_json(run(cmd_metrics, {"bootstrap", "--scores", noisy, "--versus", perfect}).out);
  CHECK(nj["difference"]["auc_macro"].get<double>() < 0);
  CHECK(nj["difference"]["auc_macro_ci"][0].get<double>() <= nj["difference"]["auc_macro"]);
  CHECK(nj["difference"]["auc_macro_ci"][1].get<double>() <= 0);
}

TEST_CASE("metrics bootstrap on per-label files: mismatches named by file and line, exit 2") {
  TempDir tmp;
  const std::string a = file_of(tmp, "a.csv", 1, 0.4);
  // Another note id at note 2 (lines 5-7).
  const std::string ids = file_of(tmp, "ids.csv", 1, 0, {"p1", "q2", "p3", "p4", "p5"});
  Run r = run(cmd_metrics, {"bootstrap", "--scores", a, "--versus", ids});
  CHECK(r.code == 2);
  CHECK(r.error == a + ":5: record 'p2' where " + ids +
                       ":5 has record 'q2' (note 2 of split 'test'; a paired bootstrap needs the "
                       "same notes in the same order)");
  CHECK(r.out.empty());
  // Another label set: the second label differs (line 3).
  const std::string codes =
      file_of(tmp, "codes.csv", 1, 0, {"p1", "p2", "p3", "p4", "p5"}, {"i10", "r52", "e11.9"});
  r = run(cmd_metrics, {"bootstrap", "--scores", a + "," + codes});
  CHECK(r.code == 2);
  CHECK(r.error == a + ":3: label 'r50.9' where " + codes +
                       ":3 has label 'r52' (a paired bootstrap needs the same label set in the "
                       "same order)");
  // Fewer notes; another gold value; a binary file in a multi-label list; an absent split.
  const std::string text = test::read_text(a);
  const std::string fewer = tmp.write("fewer.csv", text.substr(0, text.find("p5,")));
  r = run(cmd_metrics, {"bootstrap", "--scores", a, "--versus", fewer});
  CHECK(r.code == 2);
  CHECK(r.error == a + " has 5 notes of split 'test', " + fewer + " 4");
  std::string flipped = text;
  flipped.replace(flipped.find("p4,test,e11.9,1,"), 16, "p4,test,e11.9,0,");
  const std::string gold = tmp.write("gold.csv", flipped);
  r = run(cmd_metrics, {"bootstrap", "--scores", a, "--versus", gold});
  CHECK(r.code == 2);
  CHECK(r.error == a + ":13: record 'p4' label 'e11.9' has gold 1, " + gold + ":13 gold 0");
  const std::string binary = tmp.write("binary.csv", "record_id,split,label,score\n1,test,0,0.5\n");
  r = run(cmd_metrics, {"bootstrap", "--scores", a + "," + binary});
  CHECK(r.code == 2);
  CHECK(
      test::contains(r.error, binary + ":1: the header must be 'record_id,split,code,gold,score'"));
  r = run(cmd_metrics, {"bootstrap", "--scores", a, "--split", "dev"});
  CHECK(r.code == 2);
  CHECK(r.error == a + ": no note of split 'dev' (the file has test)");
  CHECK(run(cmd_metrics, {"bootstrap", "--scores", a, "--k", "0"}).code == 2);
  r = run(cmd_metrics, {"bootstrap", "--scores", a + ","});
  CHECK(r.code == 2);
  CHECK(test::contains(r.error,
                       "option --scores expects a comma-separated list without empty items"));
  r = run(cmd_metrics, {"bootstrap", "--scores", a, "--versus", a + ",," + a});
  CHECK(r.code == 2);
  CHECK(test::contains(r.error,
                       "option --versus expects a comma-separated list without empty items"));
  CHECK(run(cmd_metrics, {"bootstrap", "--scores", binary, "--k", "3"}).code == 2);
}
