// The C-MemNN paper's figures on codiesp-kb runs of the fixture notes and knowledge base:
// cmemnn-fig3 (dev P@5 per epoch from the runs' logs, one line per run) and kb-hops (the
// addressing weights over the pages at every hop, pages named, gold starred), and their errors.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/tasks/kb_fixture.hpp"
#include "tests/test_util.hpp"
#include "tests/tools/cli_run.hpp"
#include "tools/commands.hpp"

using namespace memgrad;
using namespace memgrad::cli;
using memgrad::test::Run;
using memgrad::test::run;
namespace fs = std::filesystem;

TEST_CASE("figures cmemnn-fig3 and kb-hops on codiesp-kb runs") {
  const test::KbFixture fx;
  test::write_kb_notes(fx.dir);
  const std::string c = (fx.dir.path / "c").string(), e = (fx.dir.path / "e").string();
  REQUIRE(cmd_train(test::kb_train_words(fx.dir, c, "c-memnn", 3, 3)) == 0);
  REQUIRE(cmd_train(test::kb_train_words(fx.dir, e, "memn2n-kb", 4, 2)) == 0);

  // Fig. 3: one line per run, named by model and hops, a point per epoch.
  const fs::path fig3 = fx.dir.path / "fig3.svg";
  const Run f = run(cmd_figure, {"cmemnn-fig3", "--checkpoint", c + "," + e, "--out", fig3});
  REQUIRE(f.code == 0);
  const std::string svg = test::read_text(fig3);
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(test::contains(svg, "c-memnn, 3 hops"));
  CHECK(test::contains(svg, "memn2n-kb, 4 hops"));
  CHECK(test::contains(svg, "dev P@5"));
  const Run page = run(cmd_figure, {"cmemnn-fig3", "--checkpoint", c, "--out",
                                    (fx.dir.path / "fig3.html").string()});
  REQUIRE(page.code == 0);
  CHECK(test::contains(test::read_text(fx.dir.path / "fig3.html"), "<li>" + c + "</li>"));

  // kb-hops: gated addressing's gates for C-MemNN (3 hops), softmax attention for End-to-End.
  const fs::path hops = fx.dir.path / "hops.svg";
  REQUIRE(run(cmd_figure, {"kb-hops", "--checkpoint", c, "--sample", "0", "--out", hops}).code ==
          0);
  std::string h = test::read_text(hops);
  CHECK(test::contains(h, "gates σ(g_i)"));
  CHECK(test::contains(h, "hop 3"));
  CHECK(!test::contains(h, "hop 4"));
  // Test note 0 is "g" (fever): R50.9 is starred; the pages carry their Disease Ontology names.
  CHECK(test::contains(h, "* R509"));
  CHECK(test::contains(h, "[DO: gastroenteritis"));
  REQUIRE(run(cmd_figure, {"kb-hops", "--checkpoint", e, "--out", hops}).code == 0);
  h = test::read_text(hops);
  CHECK(test::contains(h, "Attention p_i"));
  CHECK(test::contains(h, "hop 4"));

  // Errors: a sample or a setting for a figure of logs, an empty run in the list, a run of a log
  // without dev P@5 lines, a figure of another model's runs.
  Run r = run(cmd_figure, {"cmemnn-fig3", "--checkpoint", c, "--sample", "1", "--out", fig3});
  CHECK(r.code == 2);
  CHECK(r.error == "figure cmemnn-fig3 takes no --sample");
  r = run(cmd_figure, {"cmemnn-fig3", "--checkpoint", c, "--set", "hops=2", "--out", fig3});
  CHECK(r.code == 2);
  CHECK(r.error == "figure cmemnn-fig3 takes no --set");
  CHECK(run(cmd_figure, {"cmemnn-fig3", "--checkpoint", c + ",", "--out", fig3}).code == 2);
  std::ofstream(fs::path(e) / "log.jsonl") << "{\"step\": 0, \"loss\": 1}\n";
  r = run(cmd_figure, {"cmemnn-fig3", "--checkpoint", c + "," + e, "--out", fig3});
  CHECK(r.code == 2);
  CHECK(test::contains(r.error, e + "/log.jsonl has no epoch line with dev_p_at_5"));
  std::ofstream(fs::path(e) / "log.jsonl") << "{\"step\": 0}\nnot json\n{\"step\": 1}\n";
  r = run(cmd_figure, {"cmemnn-fig3", "--checkpoint", e, "--out", fig3});
  CHECK(r.code == 2);
  CHECK(r.error == e + "/log.jsonl:2: not a JSON object");
  r = run(cmd_figure, {"dmnc-fig3", "--checkpoint", c, "--out", fig3});
  CHECK(r.code == 2);
  CHECK(test::contains(r.error, " is c-memnn on codiesp-kb"));
}
