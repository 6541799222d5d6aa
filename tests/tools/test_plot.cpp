// memgrad plot: training curves of runs from their log.jsonl, overlaid, as SVG or HTML; errors
// name the file and line.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "tests/test_util.hpp"
#include "tests/tools/cli_run.hpp"
#include "tests/tools/train_util.hpp"

using namespace memgrad;
using namespace memgrad::cli;
using memgrad::test::run;
using memgrad::test::TempDir;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

}  // namespace

TEST_CASE("plot: two runs overlaid, loss, evaluation, learning rate and gradient norm panels") {
  TempDir tmp;
  const fs::path a = tmp.path / "run-a", b = tmp.path / "run-b";
  Words wa = memgrad::test::tiny_run(a, 4), wb = memgrad::test::tiny_run(b, 4);
  wa.insert(wa.end(), {"--eval-every", "2"});
  wb.insert(wb.end(), {"--eval-every", "2", "--lr", "0.01"});
  REQUIRE(cmd_train(wa) == 0);
  REQUIRE(cmd_train(wb) == 0);

  const fs::path svg = tmp.path / "curves.svg";
  const test::Run r = run(cmd_plot, {a.string(), b.string(), "--out", svg.string()});
  REQUIRE(r.code == 0);
  const std::string s = test::read_text(svg);
  CHECK(s.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(s.find(">run-a vs run-b</text>") != std::string::npos);
  for (const char* panel : {">training loss</text>", ">learning rate</text>",
                            ">gradient norm (before clipping)</text>"})
    CHECK(test::count_of(s, panel) == 1);
  // Each run in every panel's legend; the loss panel also has each run's mean (dashed).
  CHECK(test::count_of(s, ">run-a</text>") == test::count_of(s, ">run-b</text>"));
  CHECK(test::count_of(s, ">run-a (mean)</text>") == 1);
  // 4 logged steps a run: a point per step on the loss line, with its value on hover.
  CHECK(test::count_of(s, "<title>run-a: 3, ") >= 3);
  // Self-contained: no scripts, images or links.
  for (const char* bad : {"<script", "<image", "href="}) CHECK(s.find(bad) == std::string::npos);
  CHECK(r.out == "wrote " + svg.string() + " (" +
                     std::to_string(test::count_of(s, "<g transform")) + " panels, 2 runs)\n");

  const fs::path html = tmp.path / "curves.html";
  REQUIRE(run(cmd_plot, {a.string(), (b / "log.jsonl").string(), "--names", "base,fast", "--out",
                         html.string()})
              .code == 0);
  const std::string h = test::read_text(html);
  CHECK(h.find("<title>base vs fast</title>") != std::string::npos);
  CHECK(h.find("model dual-lstm, task sum2seq") != std::string::npos);
  CHECK(h.find("lr 0.01") != std::string::npos);
  CHECK(h.rfind("</html>\n") == h.size() - 8);
}

TEST_CASE("plot: evaluation tables of up to 4 numbers are panels, constant numbers are not") {
  TempDir tmp;
  const fs::path log = tmp.path / "run" / "log.jsonl";
  write(log,
        "{\"step\":0,\"loss\":2,\"lr\":0.1,\"grad_norm\":1}\n"
        "{\"step\":1,\"eval\":{\"accuracy\":{\"4\":0.1,\"8\":0.05},\"test_samples\":100,"
        "\"task_errors\":{\"1\":1,\"2\":2,\"3\":3,\"4\":4,\"5\":5}}}\n"
        "{\"step\":3,\"eval\":{\"accuracy\":{\"4\":0.5,\"8\":0.25},\"test_samples\":100,"
        "\"task_errors\":{\"1\":0,\"2\":2,\"3\":3,\"4\":4,\"5\":5}}}\n"
        "{\"step\":3,\"epoch\":1,\"best\":true,\"valid_auc_roc\":0.8}\n"
        "{\"step\":7,\"epoch\":2,\"best\":false,\"valid_auc_roc\":0.7}\n");
  const fs::path svg = tmp.path / "x.svg";
  REQUIRE(run(cmd_plot, {log.string(), "--out", svg.string()}).code == 0);
  const std::string s = test::read_text(svg);
  CHECK(test::count_of(s, ">eval: accuracy 4</text>") == 1);
  CHECK(test::count_of(s, ">eval: accuracy 8</text>") == 1);
  CHECK(test::count_of(s, ">epoch: valid_auc_roc</text>") == 1);
  CHECK(test::count_of(s, "test_samples") == 0);  // the same at every evaluation
  CHECK(test::count_of(s, "task_errors") == 0);   // a table of 5: metrics.json's
  CHECK(test::count_of(s, "<title>run: 3, 0.5</title>") == 1);
  CHECK(test::count_of(s, "<g transform") ==
        6);  // loss, 2 accuracies, the epoch score, lr, gradient norm
}

TEST_CASE("plot: a missing or malformed log.jsonl is an error naming file and line") {
  TempDir tmp;
  const std::string out = (tmp.path / "x.svg").string();
  const test::Run missing = run(cmd_plot, {(tmp.path / "none").string(), "--out", out});
  CHECK(missing.code == 2);
  CHECK(missing.error.find("none/log.jsonl': cannot read it") != std::string::npos);

  const fs::path bad = tmp.path / "bad";
  write(bad / "log.jsonl", "{\"step\":0,\"loss\":1}\n{\"step\":1,\"loss\":\n{\"step\":2}\n");
  const test::Run torn = run(cmd_plot, {bad.string(), "--out", out});
  CHECK(torn.code == 2);
  CHECK(torn.error.find((bad / "log.jsonl").string() + ":2: not a JSON object") !=
        std::string::npos);

  write(bad / "log.jsonl", "{\"step\":0,\"loss\":1}\n{\"loss\":2}\n");
  CHECK(
      run(cmd_plot, {bad.string(), "--out", out}).error.find(":2: the line has no whole-number") !=
      std::string::npos);
  write(bad / "log.jsonl", "");
  CHECK(run(cmd_plot, {bad.string(), "--out", out}).error.find("no log lines yet") !=
        std::string::npos);
  // A last line still being written: skipped, the rest drawn.
  write(bad / "log.jsonl", "{\"step\":0,\"loss\":1}\n{\"step\":1,\"loss\":0.5}\n{\"step\":2,\"lo");
  CHECK(run(cmd_plot, {bad.string(), "--out", out}).code == 0);

  CHECK(run(cmd_plot, {bad.string()}).error == "--out FILE.svg or FILE.html is required");
  CHECK(run(cmd_plot, {bad.string(), "--out", "x.png"}).error.find("must end in .svg or .html") !=
        std::string::npos);
  CHECK(run(cmd_plot, {bad.string(), "--out", out, "--names", "a,b"}).error ==
        "--names gives 2 names for 1 runs");
  CHECK(run(cmd_plot, {"--out", out}).error.find("at least one run") != std::string::npos);
}
