// bAbI runs end to end through `memgrad train` / `eval`: EncDec overfits 50 questions (the words
// view, epoch selection), is deterministic, and `eval --json` gives per_task_error, failed_tasks
// and failed_task_ids; an en-10k task 3 run without its training file says so in metrics.json;
// `eval --set` evaluates an AMN run with its decisions' most likely values.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "engine/json_text.hpp"
#include "engine/rng.hpp"
#include "tests/test_util.hpp"
#include "tests/tools/cli_run.hpp"
#include "tests/tools/train_util.hpp"
#include "tools/commands.hpp"

using namespace memgrad;
using namespace memgrad::cli;
using namespace memgrad::test;
namespace fs = std::filesystem;

namespace {

// qa1-like stories from a fixed stream: two people move, one is asked about. n stories of 3 lines.
std::string stories(uint64_t seed, int n) {
  const char* people[] = {"Mary", "John", "Sandra", "Daniel"};
  const char* places[] = {"kitchen", "garden", "office", "hallway", "bathroom", "bedroom"};
  Rng rng(seed);
  std::ostringstream out;
  for (int i = 0; i < n; ++i) {
    const uint64_t a = rng.below(4), b = (a + 1 + rng.below(3)) % 4;
    const uint64_t la = rng.below(6), lb = rng.below(6);
    const bool ask_a = rng.below(2) == 0;
    out << "1 " << people[a] << " went to the " << places[la] << ".\n2 " << people[b]
        << " moved to the " << places[lb] << ".\n3 Where is " << people[ask_a ? a : b] << "?\t"
        << places[ask_a ? la : lb] << "\t" << (ask_a ? 1 : 2) << "\n";
  }
  return out.str();
}

Words encdec_run(const fs::path& data, const fs::path& out, const std::string& select) {
  // No --babi-view: encdec's registration asks babi for its words view.
  return {"--task",      "babi",           "--model", "encdec",    "--data",
          data.string(), "--embedding",    "16",      "--hidden",  "32",
          "--lr",        "0.01",           "--batch", "10",        "--epochs",
          "60",          "--seed",         "3",       "--threads", "1",
          "--quiet",     "--select-epoch", select,    "--out",     out.string()};
}

}  // namespace

TEST_CASE("encdec overfits 50 bAbI questions; eval --json has the per-task names; determinism") {
  TempDir tmp;
  // 56 training questions: floor(0.9 * 56) = 50 train, 6 validate.
  tmp.write("d/tasks_1-20_v1-2/en/qa1_fixture_train.txt", stories(1, 56));
  tmp.write("d/tasks_1-20_v1-2/en/qa1_fixture_test.txt", stories(2, 20));
  const fs::path a = tmp.path / "a", b = tmp.path / "b";
  // The last epoch's parameters answer every training question right.
  REQUIRE(cmd_train(encdec_run(tmp.path / "d", a, "last")) == 0);
  const nlohmann::json m = read_json(a / "metrics.json");
  CHECK(m.at("train_mean_error") == 0.0);
  CHECK(!fs::exists(a / "best.json"));

  // eval --json: the saved run's metrics again, with the names.
  std::ostringstream captured;
  auto* old = std::cout.rdbuf(captured.rdbuf());
  const int rc = cmd_eval({"--checkpoint", a.string(), "--json", "--threads", "1"});
  std::cout.rdbuf(old);
  REQUIRE(rc == 0);
  const nlohmann::json e = parse_json(captured.str());
  CHECK(e.at("mean_error") == m.at("mean_error"));
  CHECK(e.at("per_task_error") == m.at("task_errors"));
  CHECK(e.at("per_task_error").size() == 1);
  CHECK(e.at("failed_tasks").get<int>() == (e.at("mean_error").get<double>() > 5.0 ? 1 : 0));
  CHECK(e.at("failed_task_ids").size() == e.at("failed_tasks").get<size_t>());

  // The same run again, keeping the best epoch on validation (select_epoch auto for the words
  // view): the same losses, step for step, and a best.json.
  REQUIRE(cmd_train(encdec_run(tmp.path / "d", b, "auto")) == 0);
  CHECK(logged_losses(a) == logged_losses(b));
  CHECK(read_json(b / "best.json").at("metric") == "valid_accuracy");
}

TEST_CASE("an en-10k task 3 run without its training file trains on en's and says so") {
  TempDir tmp;
  tmp.write("d/tasks_1-20_v1-2/en/qa3_fixture_train.txt", stories(4, 20));
  tmp.write("d/tasks_1-20_v1-2/en/qa3_fixture_test.txt", stories(5, 5));
  tmp.write("d/tasks_1-20_v1-2/en-10k/qa3_fixture_test.txt", stories(5, 5));
  const fs::path run = tmp.path / "run";
  REQUIRE(cmd_train({"--task", "babi", "--model", "memn2n", "--data", (tmp.path / "d").string(),
                     "--babi-set", "en-10k", "--babi-task", "3", "--embedding-dim", "4", "--epochs",
                     "1", "--threads", "1", "--quiet", "--out", run.string()}) == 0);
  CHECK(read_json(run / "metrics.json").at("train_sets") == nlohmann::json{{"3", "en"}});
}

TEST_CASE("eval --set: an amn run with most_likely decisions; bad keys and values exit 2") {
  TempDir tmp;
  tmp.write("d/tasks_1-20_v1-2/en/qa1_fixture_train.txt", stories(6, 200));
  tmp.write("d/tasks_1-20_v1-2/en/qa1_fixture_test.txt", stories(7, 30));
  const fs::path dir = tmp.path / "run";
  REQUIRE(cmd_train({"--task",      "babi",        "--model",
                     "amn",         "--data",      (tmp.path / "d").string(),
                     "--babi-task", "1",           "--embedding-dim",
                     "8",           "--max-banks", "3",
                     "--epochs",    "20",          "--lr",
                     "0.01",        "--threads",   "1",
                     "--quiet",     "--out",       dir.string()}) == 0);
  const std::string ckpt = dir.string();
  auto eval_json = [&](const std::vector<std::string>& more) {
    Words w = {"--checkpoint", ckpt, "--json", "--threads", "1"};
    w.insert(w.end(), more.begin(), more.end());
    const Run r = run(cmd_eval, w);
    REQUIRE(r.code == 0);
    return parse_json(r.out);
  };
  // The run's config.json has the setting (a run saved before the key existed gets its default).
  CHECK(read_json(dir / "config.json").at("model_config").at("inference_decisions") == "sample");
  const nlohmann::json ml = eval_json({"--set", "inference_decisions=most_likely"});
  CHECK(ml.at("eval_settings") == nlohmann::json{{"inference_decisions", "most_likely"}});
  // The setting reaches the model: the last bank holds other entities than sampled draws put. The
  // scored pass and the bank-figure pass (another pass, one question at a time) take the same
  // decisions, so all banks' error is the test error.
  const nlohmann::json& per_k = ml.at("model").at("per_k");
  const nlohmann::json sampled = eval_json({});
  CHECK(per_k.front().at("entity_ratio") !=
        sampled.at("model").at("per_k").front().at("entity_ratio"));
  CHECK(per_k.back().at("error").get<double>() ==
        doctest::Approx(ml.at("mean_error").get<double>()));
  // Two settings at once, one of them a number; the default run has no eval_settings.
  const nlohmann::json two = eval_json({"--set", "inference_decisions=most_likely,decode_banks=1"});
  CHECK(two.at("eval_settings").at("decode_banks") == 1);
  CHECK(two.at("model").at("per_k").front().at("error") == per_k.front().at("error"));
  CHECK(!sampled.contains("eval_settings"));
  for (const auto& [item, says] :
       {std::pair{"nope=1", "model amn has no setting 'nope'"},
        std::pair{"decode_banks=x", "decode_banks is number in the run (0), got string"},
        std::pair{"inference_decisions=bogus",
                  "inference_decisions must be \"sample\" or \"most_likely\""},
        std::pair{"decode_banks", "expected KEY=VALUE"}}) {
    CAPTURE(item);
    const Run r = run(cmd_eval, {"--checkpoint", ckpt, "--threads", "1", "--set", item});
    CHECK(r.code == 2);
    CHECK(r.error.find(says) != std::string::npos);
  }
  // inspect and figure take the same --set on a saved run.
  const std::string svg = (tmp.path / "banks.svg").string();
  for (const char* item : {"inference_decisions=most_likely", "nope=1"}) {
    CAPTURE(item);
    const bool good = std::string(item) != "nope=1";
    fs::remove(svg);
    const Run i = run(cmd_inspect,
                      {"--checkpoint", ckpt, "--threads", "1", "--only", "p_move", "--set", item});
    CHECK(i.code == (good ? 0 : 2));
    const Run f = run(cmd_figure, {"amn-fig3", "--checkpoint", ckpt, "--threads", "1", "--set",
                                   item, "--out", svg});
    CHECK(f.code == (good ? 0 : 2));
    CHECK(fs::exists(svg) == good);
    if (!good) CHECK(f.error.find("has no setting 'nope'") != std::string::npos);
  }
}
