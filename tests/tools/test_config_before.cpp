// A run saved before a model key existed (ModelInfo::config_before): bow-attention's "scorer"
// became linear by default after runs had been trained with the tanh scorer, and the two-view
// models' "set_decoder" became "step" after runs had been trained reading with h0. A config.json
// without the key is read with the value those runs had, so eval reproduces the run's metrics.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/json_text.hpp"
#include "tests/tasks/kb_fixture.hpp"
#include "tests/tasks/mimic_fixture.hpp"
#include "tests/test_util.hpp"
#include "tests/tools/cli_run.hpp"
#include "tools/commands.hpp"

using namespace memgrad;
using namespace memgrad::cli;
using memgrad::test::Run;
using memgrad::test::run;
namespace fs = std::filesystem;

namespace {

// Rewrites the trained run in `out` as an older memgrad wrote it, without `key` in its model
// config, and checks that eval scores `metrics` exactly as training did.
void eval_without_key(const fs::path& out, const char* key,
                      std::initializer_list<const char*> metrics) {
  const auto read = [](const fs::path& p) { return parse_json(std::ifstream(p)); };
  const nlohmann::json trained = read(out / "metrics.json");
  nlohmann::json config = read(out / "config.json");
  REQUIRE(config["model_config"].erase(key) == 1);
  std::ofstream(out / "config.json") << dump_json(config, 2);
  const Run r = run(cmd_eval, {"--checkpoint", out.string(), "--json", "--threads", "1"});
  REQUIRE_MESSAGE(r.code == 0, r.error);
  const nlohmann::json again = parse_json(r.out);
  for (const char* metric : metrics) {
    CAPTURE(metric);
    CHECK(again.at(metric) == trained.at(metric));
  }
}

}  // namespace

TEST_CASE("a run saved before bow-attention's scorer option is read with the tanh scorer") {
  const test::KbFixture fx;
  test::write_kb_notes(fx.dir);
  const fs::path out = fx.dir.path / "run";
  Run r = run(cmd_train, {"--task",     "codiesp", "--data",      (fx.dir.path / "notes").string(),
                          "--top-k",    "3",       "--min-count", "1",
                          "--min-docs", "1",       "--model",     "bow-attention",
                          "--scorer",   "tanh",    "--embedding", "8",
                          "--batch",    "2",       "--epochs",    "2",
                          "--threads",  "1",       "--quiet",     "--out",
                          out.string()});
  REQUIRE_MESSAGE(r.code == 0, r.error);
  eval_without_key(out, "scorer", {"auc_roc_micro", "auc_pr_micro", "p_at_8"});
}

TEST_CASE("a set-output run saved before set_decoder existed is read with one read from h0") {
  test::TempDir dir;
  namespace fx = test::mimic_fixture;
  fx::write_tables(dir.path, fx::make_tables(40));
  const fs::path out = dir.path / "run";
  Run r = run(cmd_train, {"--task",       "mimic-drugs", "--data",         dir.path.string(),
                          "--model",      "dmnc-late",   "--set-decoder",  "read",
                          "--embedding",  "6",           "--hidden",       "6",
                          "--word-size",  "4",           "--memory-slots", "4",
                          "--batch",      "5",           "--epochs",       "2",
                          "--iterations", "0",           "--threads",      "1",
                          "--quiet",      "--out",       out.string()});
  REQUIRE_MESSAGE(r.code == 0, r.error);
  eval_without_key(out, "set_decoder", {"auc_macro", "auc_micro", "p_at_1"});
}
