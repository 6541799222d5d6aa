// Model selection over epochs (tools/model_selection.hpp) end to end on the hand-made PhysioNet
// data: the best epoch's parameters and record, metrics.json and eval computed with them, a
// resumed run that selects the same epoch as an uninterrupted one, and --overwrite starting over.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/json_text.hpp"
#include "tests/tasks/physionet_fixture.hpp"
#include "tests/test_util.hpp"
#include "tests/tools/train_util.hpp"
#include "tools/commands.hpp"

using namespace memgrad;
using namespace memgrad::cli;
using memgrad::test::read_json;
using memgrad::test::TempDir;
using memgrad::test::with_words;
namespace fs = std::filesystem;

namespace {

Words run(const std::string& data, const fs::path& out, int epochs) {
  return with_words(memgrad::test::physionet_run(data, out), {"--epochs", std::to_string(epochs)});
}

// The epoch lines of a run's log: (epoch, valid_auc_roc).
std::vector<std::pair<int, double>> epoch_scores(const fs::path& dir) {
  std::ifstream in(dir / "log.jsonl");
  std::vector<std::pair<int, double>> out;
  std::string line;
  while (std::getline(in, line)) {
    const auto j = parse_json(line);
    if (j.contains("epoch"))
      out.emplace_back(j["epoch"].get<int>(), j["valid_auc_roc"].get<double>());
  }
  return out;
}

}  // namespace

TEST_CASE("model selection keeps the epoch of best validation AUC, across a resume") {
  TempDir tmp;
  const auto data = memgrad::test::physionet::make_data(tmp);
  const fs::path full = tmp.path / "full", part = tmp.path / "part";
  REQUIRE(cmd_train(run(data.dir, full, 6)) == 0);
  const auto scores = epoch_scores(full);
  REQUIRE(scores.size() == 6);
  auto best = scores.front();
  for (const auto& s : scores)
    if (s.second > best.second) best = s;  // ties keep the earlier epoch
  const nlohmann::json info = read_json(full / "best.json");
  CHECK(info["epoch"] == best.first);
  CHECK(info["value"].get<double>() == best.second);
  CHECK(info["metric"] == "valid_auc_roc");
  CHECK(fs::exists(full / "best.safetensors"));
  const nlohmann::json metrics = read_json(full / "metrics.json");
  CHECK(metrics["selected"] == info);
  // metrics.json was computed with the best epoch's parameters: its validation AUC is the score.
  CHECK(metrics["valid"]["auc_roc"].get<double>() == best.second);
  CHECK(cmd_eval({"--checkpoint", full.string(), "--json"}) == 0);

  // Three epochs, then resumed to six: the same record.
  REQUIRE(cmd_train(run(data.dir, part, 3)) == 0);
  REQUIRE(cmd_train({"--resume", part.string(), "--epochs", "6", "--quiet"}) == 0);
  CHECK(read_json(part / "best.json") == info);
  CHECK(epoch_scores(part) == scores);

  // --overwrite starts the selection over.
  Words again = run(data.dir, full, 1);
  again.push_back("--overwrite");
  REQUIRE(cmd_train(again) == 0);
  CHECK(read_json(full / "best.json")["epoch"] == 1);
}

TEST_CASE("--patience stops training P epochs after the best one, and a resume trains no further") {
  TempDir tmp;
  const auto data = memgrad::test::physionet::make_data(tmp);
  const int epochs = 30, patience = 2;
  const fs::path full = tmp.path / "full", early = tmp.path / "early";
  REQUIRE(cmd_train(run(data.dir, full, epochs)) == 0);
  const auto scores = epoch_scores(full);
  REQUIRE(scores.size() == size_t(epochs));
  // Where the rule must stop, from the uninterrupted run's scores (ties keep the earlier epoch).
  int best_epoch = 0, stop = epochs;
  double best = -1;
  for (const auto& [epoch, score] : scores) {
    if (score > best) best = score, best_epoch = epoch;
    if (epoch - best_epoch >= patience) {
      stop = epoch;
      break;
    }
  }
  REQUIRE(stop < epochs);  // the fixture's validation AUC stalls: the rule has something to do

  Words w = run(data.dir, early, epochs);
  for (const char* a : {"--patience", "2"}) w.push_back(a);
  REQUIRE(cmd_train(w) == 0);
  const auto stopped = epoch_scores(early);
  CHECK(stopped == std::vector<std::pair<int, double>>(scores.begin(), scores.begin() + stop));
  const nlohmann::json metrics = read_json(early / "metrics.json");
  CHECK(metrics["early_stop"]["epoch"] == stop);
  CHECK(metrics["early_stop"]["patience"] == patience);
  CHECK(metrics["selected"]["epoch"] == best_epoch);
  CHECK(read_json(full / "metrics.json").contains("early_stop") == false);

  // Resumed, it stays stopped; with more patience it trains on exactly as the full run did.
  REQUIRE(cmd_train({"--resume", early.string(), "--quiet"}) == 0);
  CHECK(epoch_scores(early).size() == size_t(stop));
  REQUIRE(cmd_train({"--resume", early.string(), "--patience", "0", "--quiet"}) == 0);
  CHECK(epoch_scores(early) == scores);
  CHECK(read_json(early / "best.json") == read_json(full / "best.json"));
}

TEST_CASE("an epoch of one step (the training split in one batch) is still scored and selected") {
  // A task with data ends an epoch after every step then; only a generator's steps end none.
  TempDir tmp;
  const auto data = memgrad::test::physionet::make_data(tmp);
  const fs::path dir = tmp.path / "one-batch";
  Words w = with_words(run(data.dir, dir, 3), {"--patience", "5"});
  for (size_t i = 0; i + 1 < w.size(); ++i)
    if (w[i] == "--batch") w[i + 1] = "24";  // the fixture's 24 training stays, in one batch
  REQUIRE(cmd_train(w) == 0);
  REQUIRE(epoch_scores(dir).size() == 3);
  CHECK(read_json(dir / "best.json")["metric"] == "valid_auc_roc");
  CHECK(read_json(dir / "metrics.json").contains("selected"));
}

TEST_CASE("--patience on a task that scores no epochs is refused") {
  TempDir tmp;
  CHECK_THROWS_WITH_AS(
      cmd_train({"--task", "sum2seq", "--model", "lstm", "--iterations", "2", "--patience", "3",
                 "--out", (tmp.path / "r").string(), "--quiet"}),
      doctest::Contains("scores no epochs"), memgrad::Error);
}

TEST_CASE("--select-by valid_loss keeps the epoch of least validation loss") {
  TempDir tmp;
  const auto data = memgrad::test::physionet::make_data(tmp);
  const fs::path dir = tmp.path / "by-loss";
  REQUIRE(cmd_train(with_words(run(data.dir, dir, 5), {"--select-by", "valid_loss"})) == 0);
  std::ifstream in(dir / "log.jsonl");
  std::string line;
  int epochs = 0, best_epoch = 0;
  double best = 0;
  while (std::getline(in, line)) {
    const auto j = parse_json(line);
    if (!j.contains("epoch")) continue;
    ++epochs;
    CHECK(j.contains("valid_auc_roc"));  // the task's score is still logged
    const double loss = j.at("valid_loss").get<double>();
    if (best_epoch == 0 || loss < best) best = loss, best_epoch = j["epoch"].get<int>();
    CHECK(j["best"].get<bool>() == (best_epoch == j["epoch"].get<int>()));
  }
  REQUIRE(epochs == 5);
  const nlohmann::json info = read_json(dir / "best.json");
  CHECK(info["metric"] == "valid_loss");
  CHECK(info["epoch"] == best_epoch);
  CHECK(info["value"].get<double>() == best);
  CHECK(read_json(dir / "metrics.json")["selected"] == info);
}

TEST_CASE("--select-by valid_loss on a task without validation batches is refused") {
  TempDir tmp;
  CHECK_THROWS_WITH_AS(
      cmd_train({"--task", "sum2seq", "--model", "lstm", "--iterations", "2", "--select-by",
                 "valid_loss", "--out", (tmp.path / "r").string(), "--quiet"}),
      doctest::Contains("has no validation batches"), memgrad::Error);
  CHECK_THROWS_WITH_AS(
      cmd_train({"--task", "sum2seq", "--model", "lstm", "--iterations", "2", "--select-by", "best",
                 "--out", (tmp.path / "s").string(), "--quiet"}),
      doctest::Contains("must be score"), memgrad::Error);
}
