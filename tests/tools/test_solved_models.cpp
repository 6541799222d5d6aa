// `memgrad train` of the models with their own exact solvers (models/solved_model.hpp: l1-logreg,
// linear-svm) on the real CodiEsp notes: each epoch solves one point of the regularisation path
// and logs it (with --select per_label, each label keeps its point of least dev loss), a resumed
// run is the uninterrupted one, and the settings such a run cannot honour
// are refused. Skipped (ctest entry tools_shared_data) when ../shared/data/codiesp is absent.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>

#include "tests/tools/train_util.hpp"

using namespace memgrad;
using namespace memgrad::test;

namespace {

Words codiesp_run(const std::string& model, const std::filesystem::path& out, int epochs) {
  return {"--task",       "codiesp", "--model", model,   "--data",    shared_path("data/codiesp"),
          "--max-length", "60",      "--batch", "100",   "--epochs",  std::to_string(epochs),
          "--threads",    "1",       "--quiet", "--out", out.string()};
}

// The log without wall or CPU times (the solver's CPU seconds in each epoch's note).
std::vector<nlohmann::json> log_without_times(const std::filesystem::path& dir) {
  std::vector<nlohmann::json> lines = log_without_wall_time(dir);
  for (nlohmann::json& j : lines)
    if (j.contains("note"))
      j["note"] = std::regex_replace(j["note"].get<std::string>(),
                                     std::regex(", solver [0-9.]+ CPU s"), "");
  return lines;
}

}  // namespace

TEST_CASE("l1-logreg and linear-svm: a path run, its resume, and the settings it refuses" *
          doctest::test_suite(test::kSharedData)) {
  if (!shared_data_present(shared_path("data/codiesp"))) return;
  TempDir tmp;
  // l1-logreg chooses per label by default, linear-svm globally.
  for (const std::string variant : {"l1-logreg", "l1-logreg global", "linear-svm"}) {
    CAPTURE(variant);
    const std::string model = variant.substr(0, variant.find(' '));
    const bool per_label = variant == "l1-logreg";
    auto run = [&](const std::filesystem::path& out, int epochs) {
      Words words = codiesp_run(model, out, epochs);
      if (variant == "l1-logreg global") words.insert(words.end(), {"--select", "global"});
      return words;
    };
    const std::string name = model + (per_label ? "-per-label" : "");
    const auto whole = tmp.path / (name + "-whole"), split = tmp.path / (name + "-split");
    REQUIRE(cli::cmd_train(run(whole, 4)) == 0);
    REQUIRE(cli::cmd_train(run(split, 2)) == 0);
    REQUIRE(cli::cmd_train({"--resume", split.string(), "--epochs", "4", "--quiet"}) == 0);
    const auto lines = log_without_times(whole);
    CHECK(lines == log_without_times(split));
    CHECK(read_json(whole / "metrics.json") == read_json(split / "metrics.json"));
    // One solved path point per epoch, converged, its strength in the note.
    int epochs = 0;
    for (const nlohmann::json& j : lines)
      if (j.contains("epoch")) {
        ++epochs;
        const std::string note = j.at("note").get<std::string>();
        CHECK(note.rfind(model == "l1-logreg" ? "lambda " : "C ", 0) == 0);
        CHECK(note.find("NOT converged") == std::string::npos);
        // per_label: how many labels keep the point (all at the first point).
        CHECK((note.find("labels keep it") != std::string::npos) == per_label);
        if (per_label && j.at("epoch") == 1)
          CHECK(note.find(", 50 labels keep it") != std::string::npos);
      }
    CHECK(epochs == 4);
    const nlohmann::json m = read_json(whole / "metrics.json");
    CHECK(m.at("selected").at("epoch").get<int>() >= 1);
    CHECK(m.at("auc_roc_micro").get<double>() > 0.8);
  }
  // One step per epoch (no epoch end to solve at) and shards are refused.
  Words one_step = codiesp_run("l1-logreg", tmp.path / "one", 2);
  one_step[std::find(one_step.begin(), one_step.end(), "--batch") - one_step.begin() + 1] = "500";
  CHECK(error_of([&] { cli::cmd_train(one_step); }).find("at least two steps per epoch") !=
        std::string::npos);
  Words shards = codiesp_run("linear-svm", tmp.path / "shards", 2);
  shards.insert(shards.end(), {"--shards", "2"});
  CHECK(error_of([&] { cli::cmd_train(shards); }).find("--shards 1") != std::string::npos);
}
