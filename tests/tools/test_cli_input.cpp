// Bad input to memgrad metrics, bench and gradcheck: each gets a clear error naming the file and
// line (or the flag) at fault, thrown as a type main.cpp turns into exit code 2, and nothing on
// stdout.
#include <doctest/doctest.h>

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "engine/error.hpp"
#include "engine/json_text.hpp"
#include "tests/test_util.hpp"
#include "tests/tools/cli_run.hpp"
#include "tools/args.hpp"
#include "tools/commands.hpp"

using namespace memgrad::cli;
using memgrad::parse_json;
using memgrad::test::contains;
using memgrad::test::Run;
using memgrad::test::run;
using memgrad::test::TempDir;

namespace {

const char* kScores4 = "0.9,0.1,0.8\n0.7,0.2,0.6\n0.1,0.9,0.3\n0.8,0.7,0.2\n";

}  // namespace

// ---- memgrad metrics ----------------------------------------------------------------------------

TEST_CASE("metrics: a JSONL first row of booleans is bad data on line 1, not a skipped header") {
  TempDir tmp;
  const std::string scores = tmp.write("s.csv", kScores4);
  const std::string labels = tmp.write("l.jsonl", "[true,false,true]\n[1,0,1]\n[0,1,0]\n[1,1,0]\n");
  const Run r = run(cmd_metrics, {"--labels", labels, "--scores", scores});
  CHECK(r.code == 2);
  CHECK(contains(r.error, "l.jsonl:1: column 1: not a number: 'true'"));
  CHECK_FALSE(contains(r.error, "has 3"));  // it once said the 4-row file had 3 rows
  CHECK(r.out.empty());
}

TEST_CASE("metrics: JSONL booleans are rejected on every row alike") {
  TempDir tmp;
  const std::string scores = tmp.write("s.csv", kScores4);
  const std::string labels = tmp.write("l.jsonl", "[1,0,1]\n[0,1,0]\n[1,false,0]\n[1,1,0]\n");
  const Run r = run(cmd_metrics, {"--labels", labels, "--scores", scores});
  CHECK(r.code == 2);
  CHECK(contains(r.error, "l.jsonl:3: column 2: not a number: 'false'"));
}

TEST_CASE("metrics: a JSONL first row of names is still a header (docs/metrics.md)") {
  TempDir tmp;
  const std::string scores = tmp.write("s.csv", kScores4);
  const std::string labels =
      tmp.write("l.jsonl", "[\"a\",\"b\",\"c\"]\n[1,0,1]\n[0,1,0]\n[1,1,0]\n[0,0,1]\n");
  const Run r = run(cmd_metrics, {"--labels", labels, "--scores", scores});
  CHECK(r.code == 0);
  CHECK(parse_json(r.out)["samples"] == 4);
}

TEST_CASE("metrics: a skipped header is said on stderr, the same rule for CSV and JSONL") {
  TempDir tmp;
  const std::string scores = tmp.write("s.csv", std::string("x,y,z\n") + kScores4);
  const std::string labels =
      tmp.write("l.jsonl", "[\"a\",\"b\",\"c\"]\n[1,0,1]\n[0,1,0]\n[1,1,0]\n[0,0,1]\n");
  const std::string err = (tmp.path / "err").string();
  const std::string command = std::string(MEMGRAD_BINARY) + " metrics --labels " + labels +
                              " --scores " + scores + " >/dev/null 2>" + err;
  REQUIRE(std::system(command.c_str()) == 0);
  std::ifstream in(err);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str() == "memgrad metrics: " + labels +
                          ":1: header row of 3 names skipped ('\"a\"', '\"b\"', '\"c\"')\n"
                          "memgrad metrics: " +
                          scores + ":1: header row of 3 names skipped ('x', 'y', 'z')\n");
}

TEST_CASE("metrics: CSV true,false is data, as in JSONL, not a skipped header") {
  TempDir tmp;
  const std::string scores = tmp.write("s.csv", kScores4);
  const std::string labels = tmp.write("l.csv", "true,false,true\n1,0,1\n0,1,0\n1,1,0\n");
  const Run r = run(cmd_metrics, {"--labels", labels, "--scores", scores});
  CHECK(r.code == 2);
  CHECK(contains(r.error, "l.csv:1: column 1: not a number: 'true'"));
  CHECK(r.out.empty());
}

TEST_CASE("metrics: flag values in messages are quoted and escaped") {
  TempDir tmp;
  const std::string labels = tmp.write("l.csv", "1,0\n0,1\n");
  Run r = run(cmd_metrics, {"--labels", labels, "--scores", labels, "--k", "1,\x1b[2J"});
  CHECK(r.code == 2);
  CHECK(contains(r.error, "got '1,\\x1b[2J'"));
  r = run(cmd_metrics, {"--labels", labels, "--scores", labels, "--format", std::string(100, 'j')});
  CHECK(r.code == 2);
  CHECK(contains(r.error, "...' (100 bytes)"));
}

TEST_CASE("metrics: a JSONL number out of range is an error on its line") {
  TempDir tmp;
  const std::string labels = tmp.write("l.csv", "1,0\n0,1\n");
  const std::string scores = tmp.write("big.jsonl", "[0.5,0.5]\n[0.1,1e400]\n");
  const Run r = run(cmd_metrics, {"--labels", labels, "--scores", scores});
  CHECK(r.code == 2);
  CHECK(contains(r.error, "big.jsonl:2: invalid JSON"));
  CHECK(contains(r.error, "1e400"));
  CHECK(r.out.empty());
}

TEST_CASE("metrics: empty JSONL rows are an error on their line") {
  TempDir tmp;
  const std::string empty = tmp.write("e.jsonl", "[]\n[]\n");
  Run r = run(cmd_metrics, {"--labels", empty, "--scores", empty});
  CHECK(r.code == 2);
  CHECK(contains(r.error, "e.jsonl:1: empty row"));

  const std::string labels = tmp.write("l.csv", "1,0\n0,1\n");
  const std::string later = tmp.write("later.jsonl", "[0.5,0.5]\n[]\n");
  r = run(cmd_metrics, {"--labels", labels, "--scores", later});
  CHECK(r.code == 2);
  CHECK(contains(r.error, "later.jsonl:2: empty row"));
}

// ---- memgrad bench ------------------------------------------------------------------------------

namespace {
Words bench_lstm(const Words& more) {
  Words words = {"--model", "lstm", "--task", "sum2seq", "--threads", "1", "--json"};
  words.insert(words.end(), more.begin(), more.end());
  return words;
}
}  // namespace

TEST_CASE("bench: --steps takes a whole number of at least 1, and says so") {
  for (const char* text : {"abc", "99999999999999999999", "5x", "0", "-1", "1e3", ""}) {
    INFO("--steps '", text, "'");
    // Built with += (GCC 12 -Wrestrict false positive on "literal" + std::string).
    std::string quoted = "'", inline_form = "--steps=";
    quoted += text;
    quoted += "'";
    inline_form += text;
    Run r = run(cmd_bench, bench_lstm({"--steps", text}));
    CHECK(r.code == 2);
    CHECK(contains(r.error, "--steps expects a whole number"));
    CHECK(contains(r.error, quoted));
    CHECK(r.out.empty());
    r = run(cmd_bench, bench_lstm({inline_form}));
    CHECK(r.code == 2);
    CHECK(contains(r.error, "--steps expects a whole number"));
  }
  const Run r = run(cmd_bench, bench_lstm({"--steps"}));
  CHECK(r.code == 2);
  CHECK(contains(r.error, "--steps needs a value"));
}

TEST_CASE("bench: --model=NAME and --task=NAME work like --model NAME and --task NAME") {
  const Run r =
      run(cmd_bench, {"--model=lstm", "--task=sum2seq", "--steps=2", "--threads", "1", "--json"});
  REQUIRE(r.code == 0);
  const auto out = parse_json(r.out);
  CHECK(out["model"] == "lstm");
  CHECK(out["task"] == "sum2seq");
  CHECK(out["steps_measured"] == 2);
}

TEST_CASE("bench: a missing --model or model name is named as such") {
  Run r = run(cmd_bench, {"--task", "sum2seq"});
  CHECK(r.code == 2);
  CHECK(contains(r.error, "--model is missing"));
  r = run(cmd_bench, {"--task", "sum2seq", "--model"});
  CHECK(r.code == 2);
  CHECK(contains(r.error, "--model needs a value"));
}

// ---- memgrad gradcheck --------------------------------------------------------------------------

TEST_CASE("gradcheck: an unknown --model prints nothing but the error") {
  const Run r = run(cmd_gradcheck, {"--model", "nosuch"});
  CHECK(r.code == 2);
  CHECK(contains(r.error, "no registered model named 'nosuch'"));
  CHECK(r.out.empty());
}

TEST_CASE("gradcheck: --op and --model together are rejected, not one of them ignored") {
  for (const Words& words :
       {Words{"--op", "all", "--model", "all"}, Words{"--op", "add", "--model", "nosuch"}}) {
    const Run r = run(cmd_gradcheck, words);
    CHECK(r.code == 2);
    CHECK(contains(r.error, "--op and --model"));
    CHECK(r.out.empty());
  }
}

TEST_CASE("gradcheck: --list --json prints JSON; --list takes no --op or --model") {
  Run r = run(cmd_gradcheck, {"--list", "--json"});
  REQUIRE(r.code == 0);
  const auto cases = parse_json(r.out)["cases"];
  REQUIRE(cases.is_array());
  REQUIRE_FALSE(cases.empty());
  CHECK(cases[0].contains("op"));
  CHECK(cases[0].contains("name"));
  for (const Words& words : {Words{"--list", "--op", "add"}, Words{"--list", "--model", "all"}}) {
    r = run(cmd_gradcheck, words);
    CHECK(r.code == 2);
    CHECK(contains(r.error, "--list"));
    CHECK(r.out.empty());
  }
}

TEST_CASE("bench: training options are refused, not ignored") {
  const Run r = run(cmd_bench, {"--model", "lstm", "--task", "sum2seq", "--iterations", "5"});
  CHECK(r.code == 2);
  CHECK(contains(r.error, "--iterations is a `memgrad train` option"));
}
