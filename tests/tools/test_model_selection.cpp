// Model selection over epochs (tools/model_selection.hpp) end to end on the hand-made PhysioNet
// data: the best epoch's parameters and record, metrics.json and eval computed with them, a
// resumed run that selects the same epoch as an uninterrupted one, and --overwrite starting over.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/tasks/physionet_fixture.hpp"
#include "tests/test_util.hpp"
#include "tests/tools/train_util.hpp"
#include "tools/commands.hpp"

using namespace memgrad;
using namespace memgrad::cli;
using memgrad::test::TempDir;
using memgrad::test::with_words;
namespace fs = std::filesystem;

namespace {

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

Words run(const std::string& data, const fs::path& out, int epochs) {
  return with_words(memgrad::test::physionet_run(data, out), {"--epochs", std::to_string(epochs)});
}

// The epoch lines of a run's log: (epoch, valid_auc_roc).
std::vector<std::pair<int, double>> epoch_scores(const fs::path& dir) {
  std::ifstream in(dir / "log.jsonl");
  std::vector<std::pair<int, double>> out;
  std::string line;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
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
