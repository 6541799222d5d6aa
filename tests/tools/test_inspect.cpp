// memgrad inspect: trace grouping and rendering, and the command end to end on a tiny model.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/error.hpp"
#include "engine/json_text.hpp"
#include "models/model.hpp"
#include "tasks/task.hpp"
#include "tests/tasks/physionet_fixture.hpp"
#include "tests/test_util.hpp"
#include "tools/args.hpp"
#include "tools/commands.hpp"
#include "tools/trace_view.hpp"

using namespace memgrad;
using namespace memgrad::cli;
using memgrad::test::TempDir;
namespace fs = std::filesystem;

namespace {

Tensor values(const Shape& shape, std::vector<double> v) {
  Tensor t = Tensor::zeros(shape, DType::f64);
  for (size_t i = 0; i < v.size(); ++i) t.set(int64_t(i), v[i]);
  return t;
}

// What a command prints on standard output.
std::string stdout_of(const Words& words, int* code = nullptr) {
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  int rc = -1;
  try {
    rc = cmd_inspect(words);
  } catch (...) {
    std::cout.rdbuf(old);
    throw;
  }
  std::cout.rdbuf(old);
  if (code) *code = rc;
  return captured.str();
}

Words tiny(const std::string& model, Words extra) {
  Words w = {"--model",   model, "--task", "sum2seq", "--embedding",    "4", "--hidden",    "6",
             "--threads", "1",   "--seed", "3",       "--test-samples", "5", "--test-lmax", "4"};
  if (model.rfind("dmnc", 0) == 0 || model == "dnc")
    for (const char* s : {"--word-size", "3", "--memory-slots", "5"}) w.push_back(s);
  w.insert(w.end(), extra.begin(), extra.end());
  return w;
}

const nlohmann::json* find_series(const nlohmann::json& j, const std::string& name) {
  for (const auto& s : j.at("series"))
    if (s.at("name") == name) return &s;
  return nullptr;
}

}  // namespace

TEST_CASE("inspect: trace entries are grouped into series over their step component") {
  Trace trace;
  trace.record("enc1/t0/write_gate", values(Shape{1, 1}, {0.25}));
  trace.record("hop1/attention", values(Shape{1, 3}, {0.2, 0.3, 0.5}));
  trace.record("enc1/t1/write_gate", values(Shape{1, 1}, {0.75}));
  trace.record("dec/t12/state/usage", values(Shape{1, 2}, {0.1, 0.9}));
  trace.record("tx/not_a_step", values(Shape{1}, {4}));
  const std::vector<TraceSeries> s = group_trace(trace);
  REQUIRE(s.size() == 4);
  CHECK(s[0].name == "enc1/write_gate");
  CHECK(s[0].steps == std::vector<int64_t>{0, 1});
  CHECK(s[0].values == std::vector<std::vector<double>>{{0.25}, {0.75}});
  CHECK(s[1].name == "hop1/attention");
  CHECK(s[1].steps == std::vector<int64_t>{-1});
  CHECK(s[1].shape == Shape{3});
  CHECK(s[2].name == "dec/state/usage");
  CHECK(s[2].steps == std::vector<int64_t>{12});
  CHECK(s[3].name == "tx/not_a_step");
  CHECK(select_series(s, "usage").size() == 1);
  CHECK(select_series(s, "").size() == 4);

  Trace bad;
  bad.record("enc1/t0/h", values(Shape{2, 3}, {}));
  CHECK_THROWS_WITH_AS(group_trace(bad), doctest::Contains("'enc1/t0/h' has shape [2,3]"), Error);
  Trace changing;
  changing.record("enc1/t0/h", values(Shape{1, 3}, {}));
  changing.record("enc1/t1/h", values(Shape{1, 4}, {}));
  CHECK_THROWS_WITH_AS(group_trace(changing),
                       doctest::Contains("earlier steps of 'enc1/h' have [3]"), Error);
}

TEST_CASE("inspect: text shows numbers, shade rows, or row norms by size") {
  Trace trace;
  trace.record("a/t0/gate", values(Shape{1, 2}, {0.5, 0.125}));
  std::vector<double> ramp(16);
  for (int i = 0; i < 16; ++i) ramp[size_t(i)] = i / 15.0;
  trace.record("a/t0/usage", values(Shape{1, 16}, ramp));
  std::vector<double> big(2 * 100, 0.0);
  big[0] = 3, big[1] = 4;  // row 0 has norm 5, row 1 norm 0
  trace.record("a/t0/memory", values(Shape{1, 2, 100}, big));
  const std::string text = render_text(group_trace(trace));
  CHECK(text.find("a/gate  [2]\n  t0      0.500   0.125\n") != std::string::npos);
  CHECK(text.find("a/usage  [16]\n  shades 0 .. 1\n  t0   | ") != std::string::npos);
  // The largest value: a full block, last, and named.
  CHECK(text.find("\u2588|  max 1 at 15\n") != std::string::npos);
  CHECK(text.find("a/memory  [2,100]  L2 norm of each row over the last axis (100 values)\n  t0 "
                  "     5.000   0.000\n") != std::string::npos);
}

TEST_CASE("inspect: html prints the values of narrow series in their cells, columns numbered") {
  Trace trace;
  trace.record("t0/slot_hour", values(Shape{1, 3}, {0, -1, -1}));
  trace.record("t1/slot_hour", values(Shape{1, 3}, {0, 1, -1}));
  trace.record("t0/read_gate", values(Shape{1, 2}, {0.25, 0.875}));
  std::vector<double> wide(20, 0.5);
  trace.record("t0/usage", values(Shape{1, 20}, wide));
  const std::string html = render_html("page", {}, group_trace(trace));
  // Whole numbers as such (the hour a slot holds), others with two decimals.
  CHECK(html.find("font-size=\"9\" fill=\"#fff\">1</text>") != std::string::npos);
  CHECK(html.find(">-1</text>") != std::string::npos);
  CHECK(html.find(">0.25</text>") != std::string::npos);
  CHECK(html.find(">0.88</text>") != std::string::npos);
  CHECK(html.find("fill=\"#666\">2</text>") != std::string::npos);  // column 2 of slot_hour
  CHECK(html.find(">0.50</text>") == std::string::npos);            // 20 values a step: colour only
}

TEST_CASE("inspect: a model's gates and weightings for a sample written out, as JSON") {
  int code = -1;
  const std::string out =
      stdout_of(tiny("dmnc-late", {"--input", "3 1 4 / 1 5 9", "--json"}), &code);
  REQUIRE(code == 0);
  const nlohmann::json j = parse_json(out);
  CHECK(j.at("model") == "dmnc-late");
  CHECK(j.at("trained") == false);
  CHECK(j.at("sample").at(0) == nlohmann::json::array({"x1", "3 1 4"}));
  CHECK(std::isfinite(j.at("loss").get<double>()));
  // Each encoder steps over its 3 numbers and the end marker; usage and weightings are in [0, 1].
  for (const char* name :
       {"enc1/write_gate", "enc2/alloc_gate", "enc1/usage", "enc2/write_weights"}) {
    CAPTURE(name);
    const nlohmann::json* s = find_series(j, name);
    REQUIRE(s != nullptr);
    CHECK(s->at("steps") == nlohmann::json::array({0, 1, 2, 3}));
    for (const auto& step : s->at("values"))
      for (double v : step) CHECK((v >= 0 && v <= 1));
  }
  const nlohmann::json* reads = find_series(j, "dec/read_weights");
  REQUIRE(reads != nullptr);
  CHECK(reads->at("shape") == nlohmann::json::array({2, 5}));  // two memories, 5 slots
  CHECK(reads->at("steps").size() == 3);                       // one read per output

  // The prediction shown is the model's: the same as a plain (packed, untraced) forward pass.
  const std::string text = stdout_of(tiny("dmnc-late", {"--input", "3 1 4 / 1 5 9"}));
  const std::string predicted = j.at("sample").at(3).at(1).get<std::string>();
  CHECK(text.find("  predicted: " + predicted + "\n") != std::string::npos);
  CHECK(text.find("enc1/usage  [5]\n") != std::string::npos);
}

TEST_CASE("inspect: the tape, a filter, an HTML page, a trained run directory") {
  TempDir tmp;
  const fs::path page = tmp.path / "trace.html";
  const std::string out = stdout_of(
      tiny("wlas", {"--sample", "2", "--tape", "--only", "attention", "--html", page.string()}));
  CHECK(out.find("dec/attention1  [") != std::string::npos);
  CHECK(out.find("enc1/") == std::string::npos);  // filtered out
  CHECK(out.find("node   op") != std::string::npos);
  CHECK(out.find("cross_entropy") != std::string::npos);
  const std::string html = test::read_text(page);
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html.find("dec/attention2") != std::string::npos);
  CHECK(html.rfind("</html>\n") == html.size() - 8);

  // A trained (two-step) run directory: its parameters, its task settings.
  const fs::path run = tmp.path / "run";
  REQUIRE(cmd_train({"--task",         "sum2seq", "--model",     "dual-lstm", "--embedding",  "4",
                     "--hidden",       "6",       "--batch",     "4",         "--iterations", "2",
                     "--test-samples", "3",       "--test-lmax", "3",         "--threads",    "1",
                     "--quiet",        "--out",   run.string()}) == 0);
  const std::string trained = stdout_of({"--checkpoint", run.string(), "--sample", "1"});
  CHECK(trained.find("dual-lstm on sum2seq, test sample 1\n") != std::string::npos);
  CHECK(trained.find("untrained") == std::string::npos);
}

TEST_CASE("inspect: ebmrnn's page has the paper's Fig. 2 and 3 with variable names and hours") {
  TempDir tmp;
  const auto data = memgrad::test::physionet::make_data(tmp);
  const fs::path page = tmp.path / "ebmrnn.html";
  stdout_of({"--model", "ebmrnn", "--task", "physionet2012", "--data", data.dir, "--valid-fraction",
             "0.2", "--test-fraction", "0.2", "--threads", "1", "--sample", "2", "--html",
             page.string()});
  const std::string html = test::read_text(page);
  auto count = [&](const std::string& part) { return test::count_of(html, part); };
  // Fig. 2: 8 slots down, 48 hours across; 40 evictions (one an hour once the slots are full).
  CHECK(count("Fig. 2: explicit memory slot utilization") == 1);
  for (int j = 0; j < 8; ++j) CHECK(count(">slot " + std::to_string(j) + "</text>") == 1);
  CHECK(count("hour of the stay (t)") == 3);  // the axis of each panel
  CHECK(count("class=\"evicted\"") == 40);
  CHECK(count("hour 47, slot ") == 8);
  CHECK(count("; evicted the event of hour ") == 40);
  // Set-b stay 2 (record 142003, made_record i = 5): HR at hours 0 and 3, Na at 5, Temp at 47.
  CHECK(html.find("hour 3, slot 3: the event of hour 3 (HR 100)") != std::string::npos);
  CHECK(html.find("the event of hour 5 (Na 135)") != std::string::npos);
  for (const char* name : {"HR", "Na", "Temp"})
    CHECK(count(std::string("class=\"variable\">") + name + "</text>") == 1);
  CHECK(count("class=\"variable\">GCS</text>") == 0);  // i = 5 has no GCS
  CHECK(html.find("Temp at hour 47: 36.5 (held in slot ") != std::string::npos);
  // Fig. 3: the read gate of each of the 4 hops at every hour.
  CHECK(count("Fig. 3: influence of the explicit memory") == 1);
  for (int k = 1; k <= 4; ++k) CHECK(count(">hop " + std::to_string(k) + "</text>") == 1);
  CHECK(count("<title>hop 1, hour ") == 48);
}

TEST_CASE("inspect: bad usage names what is wrong") {
  CHECK_THROWS_WITH_AS(stdout_of({"--sample", "1"}),
                       doctest::Contains("--checkpoint DIR or --model"), UsageError);
  CHECK_THROWS_WITH_AS(stdout_of(tiny("lstm", {"--sample", "5"})),
                       doctest::Contains("--sample 5 out of range: the task has 5 test samples"),
                       UsageError);
  CHECK_THROWS_WITH_AS(stdout_of(tiny("lstm", {"--sample", "-1"})),
                       doctest::Contains("--sample must be a whole number >= 0, got '-1'"),
                       UsageError);
  CHECK_THROWS_WITH_AS(stdout_of(tiny("lstm", {"--sample", "1", "--input", "1 / 2"})),
                       doctest::Contains("not both"), UsageError);
  CHECK_THROWS_WITH_AS(stdout_of(tiny("dnc", {"--only", "nosuch"})),
                       doctest::Contains("--only 'nosuch' matches no series of model dnc"),
                       UsageError);
  CHECK_THROWS_WITH_AS(stdout_of(tiny("dnc", {"--input", "1 2 / 3"})),
                       doctest::Contains("the same length"), Error);
  TempDir tmp;
  CHECK_THROWS_AS(stdout_of(tiny("dnc", {"--html", (tmp.path / "no/such/dir/x.html").string()})),
                  Error);
  CHECK_THROWS_WITH_AS(stdout_of({"--checkpoint", (tmp.path / "absent").string()}),
                       doctest::Contains("config.json"), Error);
  CHECK_THROWS_WITH_AS(stdout_of(tiny("dnc", {"--out", "x"})),
                       doctest::Contains("--out is a training option"), UsageError);
  CHECK_THROWS_WITH_AS(stdout_of({"--checkpoint", "x", "5"}),
                       doctest::Contains("unexpected argument '5'"), UsageError);
  // Never replaced: a link (or a device such as /dev/null) at the --html path.
  fs::create_symlink(tmp.path / "target.html", tmp.path / "link.html");
  CHECK_THROWS_WITH_AS(stdout_of(tiny("dnc", {"--html", (tmp.path / "link.html").string()})),
                       doctest::Contains("exists and is not a regular file"), Error);
  CHECK(fs::is_symlink(tmp.path / "link.html"));
}

TEST_CASE("inspect: NAME=VALUE forms, a model without a trace") {
  Words w = tiny("dnc", {"--sample=1", "--only=write_gate"});
  std::replace(w.begin(), w.end(), std::string("--model"), std::string("--model=dnc"));
  w.erase(std::find(w.begin(), w.end(), std::string("dnc")));
  const std::string out = stdout_of(w);
  CHECK(out.find("dnc on sum2seq, test sample 1") != std::string::npos);
  CHECK(out.find("enc/write_gate  [1]") != std::string::npos);
  CHECK(out.find("enc/alloc_gate") == std::string::npos);
  const std::string lstm = stdout_of(tiny("lstm", {}));
  CHECK(lstm.find("(model lstm records no gates, weightings or attention)") != std::string::npos);
}
