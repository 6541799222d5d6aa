// The DMNC paper's Figs. 3-4 and Table 4 on a mimic-drugs run (`memgrad figure dmnc-fig3|4`): a
// tiny DMNC trained on small MIMIC-III tables written here, whose D_ICD_DIAGNOSES names some of
// the diagnosis codes and which has no D_ICD_PROCEDURES. One bar per code of the admission, in
// SEQ_NUM order, labelled by the code and its title where the dictionary has one; the page holds
// the case study; bad input is exit 2 without a file. On mimic-progression the bars are the gates
// inspect shows for the admission, after the patient's earlier admissions.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "engine/json_text.hpp"
#include "tests/tasks/mimic_fixture.hpp"
#include "tests/test_util.hpp"
#include "tests/tools/cli_run.hpp"

using namespace memgrad;
using namespace memgrad::test;
using memgrad::cli::cmd_figure;
using memgrad::cli::cmd_inspect;
using memgrad::cli::cmd_train;
namespace fs = std::filesystem;
namespace fx = memgrad::test::mimic_fixture;

namespace {

Run train(const std::string& task, const std::string& model, const fs::path& data,
          const fs::path& out) {
  return run(cmd_train, {"--task",         task, "--model",  model,   "--data",      data.string(),
                         "--embedding",    "8",  "--hidden", "8",     "--word-size", "4",
                         "--memory-slots", "4",  "--epochs", "1",     "--batch",     "4",
                         "--threads",      "1",  "--quiet",  "--out", out.string()});
}

// The values of inspect's lines "  <prefix> k: value", in order.
std::vector<std::string> listed(const std::string& inspect_out, const std::string& prefix) {
  std::vector<std::string> out;
  const std::regex line("^  " + prefix + " [0-9]+: (.*)$");
  std::istringstream in(inspect_out);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_match(l, m, line)) out.push_back(m[1]);
  }
  return out;
}

}  // namespace

TEST_CASE("dmnc-fig3/fig4 on mimic-drugs: a bar per code, named from D_ICD_DIAGNOSES; Table 4") {
  TempDir tmp;
  const fs::path data = tmp.path / "data";
  fx::write_tables(data, fx::make_tables(36));
  // Titles for the third diagnosis of every admission (412-414), none for the first two.
  fx::write(data / "D_ICD_DIAGNOSES.csv",
            "\"ROW_ID\",\"ICD9_CODE\",\"SHORT_TITLE\",\"LONG_TITLE\"\n"
            "1,\"412\",\"Old myocardial infarct\",\"Old myocardial infarction\"\n"
            "2,\"413\",\"Angina, other (dummy)\",\"Other angina\"\n"
            "3,\"414\",\"Coronary athero NEC\",\"Other coronary atherosclerosis\"\n");
  for (const char* model : {"dmnc-late", "dmnc-early"}) {
    CAPTURE(model);
    const fs::path ck = tmp.path / model;
    const Run trained = train("mimic-drugs", model, data, ck);
    REQUIRE_MESSAGE(trained.code == 0, trained.error);
    const Run shown = run(cmd_inspect, {"--checkpoint", ck.string(), "--sample", "1"});
    REQUIRE_MESSAGE(shown.code == 0, shown.error);
    const std::vector<std::string> dx = listed(shown.out, "diagnosis");
    const std::vector<std::string> proc = listed(shown.out, "procedure");
    REQUIRE(dx.size() == 3);  // the fixture's three diagnoses, SEQ_NUM order
    REQUIRE(proc.size() == 1);
    CHECK(std::regex_match(dx[2], std::regex("41[234] \\(.+\\)")));
    CHECK(std::regex_match(dx[0], std::regex("4[0-4]")));

    const fs::path fig3 = tmp.path / (std::string(model) + "-fig3.svg");
    Run r = run(cmd_figure, {"dmnc-fig3", "--checkpoint", ck.string(), "--sample", "1", "--out",
                             fig3.string()});
    REQUIRE_MESSAGE(r.code == 0, r.error);
    std::string svg = test::read_text(fig3);
    CHECK(test::count_of(svg, "class=\"bar\"") == dx.size());
    CHECK(svg.find("M1's write gate g^w_t over the admission's diagnoses") != std::string::npos);
    // Each bar's code in bold, its title after it when the dictionary has one, in SEQ_NUM order.
    size_t at = 0;
    for (const std::string& code : dx) {
      const std::string bare = code.substr(0, code.find(' '));
      std::string label = "<tspan font-weight=\"bold\">" + bare + "</tspan>";
      if (bare != code) label += "  " + code.substr(bare.size() + 2, code.size() - bare.size() - 3);
      label += "</text>";
      const size_t found = svg.find(label, at);
      CHECK_MESSAGE(found != std::string::npos, "no label ", label);
      if (found != std::string::npos) at = found;
    }
    CHECK(svg.find("titles from D_ICD_DIAGNOSES") != std::string::npos);

    const fs::path fig4 = tmp.path / (std::string(model) + "-fig4.html");
    r = run(cmd_figure,
            {"dmnc-fig4", "--checkpoint", ck.string(), "--sample", "1", "--out", fig4.string()});
    REQUIRE_MESSAGE(r.code == 0, r.error);
    const std::string page = test::read_text(fig4);
    CHECK(test::count_of(page, "class=\"bar\"") == 1);
    CHECK(page.find("<tspan font-weight=\"bold\">" + proc[0] + "</tspan></text>") !=
          std::string::npos);
    CHECK(page.find("shown bare (no D_ICD_PROCEDURES table in " + data.string() + ")") !=
          std::string::npos);
    // The case study: titled diagnoses as the paper writes them, drugs named from PRESCRIPTIONS'
    // DRUG column, the top 5 with probabilities, true ones in bold.
    CHECK(page.find("Case study (the paper's Table 4)") != std::string::npos);
    const std::string titled = dx[2].substr(5, dx[2].size() - 6) + " (" + dx[2].substr(0, 3) + ")";
    CHECK(page.find("<li>" + titled + "</li>") != std::string::npos);
    CHECK(page.find("NaCl 0.9% (NACL)") != std::string::npos);
    CHECK(test::count_of(page, "p = 0.") + test::count_of(page, "p = 1.") == 5);
    const size_t hits = test::count_of(page, "<li class=\"true\">");
    CHECK(hits == test::count_of(page, "&#10003; true"));
    CHECK(hits >= 1);  // NACL, in every admission, is the most frequent drug
  }

  // Bad input: a sample out of range, a run of another model, a run of another task; no file.
  const fs::path out = tmp.path / "x.svg";
  Run r = run(cmd_figure, {"dmnc-fig3", "--checkpoint", (tmp.path / "dmnc-late").string(),
                           "--sample", "99", "--out", out.string()});
  CHECK(r.code == 2);
  CHECK(r.error.find("--sample 99 out of range: the task has ") != std::string::npos);
  const Run lstm =
      run(cmd_train, {"--task", "mimic-drugs", "--model", "lstm", "--data", data.string(),
                      "--embedding", "8", "--hidden", "8", "--epochs", "1", "--batch", "4",
                      "--threads", "1", "--quiet", "--out", (tmp.path / "lstm").string()});
  REQUIRE_MESSAGE(lstm.code == 0, lstm.error);
  r = run(cmd_figure,
          {"dmnc-fig4", "--checkpoint", (tmp.path / "lstm").string(), "--out", out.string()});
  CHECK(r.code == 2);
  CHECK(r.error.find("is lstm on mimic-drugs") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE(
    "dmnc-fig3/fig4 on mimic-progression: the gates inspect shows, after the earlier admissions") {
  TempDir tmp;
  fx::write_tables(tmp.path / "data", fx::make_progression_tables(48));
  const fs::path ck = tmp.path / "prog";
  Run r = run(cmd_train, {"--task",
                          "mimic-progression",
                          "--model",
                          "dmnc-late",
                          "--data",
                          (tmp.path / "data").string(),
                          "--embedding",
                          "8",
                          "--hidden",
                          "8",
                          "--word-size",
                          "4",
                          "--memory-slots",
                          "4",
                          "--epochs",
                          "2",
                          "--batch",
                          "4",
                          "--persistent-memory",
                          "true",
                          "--threads",
                          "1",
                          "--quiet",
                          "--out",
                          ck.string()});
  REQUIRE_MESSAGE(r.code == 0, r.error);
  // A test admission with two earlier ones: its memory holds them when evaluated.
  int sample = 0;
  nlohmann::json shown;
  for (;; ++sample) {
    r = run(cmd_inspect,
            {"--checkpoint", ck.string(), "--sample", std::to_string(sample), "--json"});
    REQUIRE_MESSAGE(r.code == 0, r.error);
    shown = parse_json(r.out);
    if (shown["sample"][0][1].get<std::string>().find("admission 3 of") != std::string::npos) break;
  }
  for (const auto& [figure, encoder, view] :
       {std::tuple{"dmnc-fig3", "enc1/write_gate", "diagnoses"},
        std::tuple{"dmnc-fig4", "enc2/write_gate", "procedures"}}) {
    CAPTURE(figure);
    const fs::path svg_path = tmp.path / (std::string(figure) + ".svg");
    r = run(cmd_figure, {figure, "--checkpoint", ck.string(), "--sample", std::to_string(sample),
                         "--out", svg_path.string()});
    REQUIRE_MESSAGE(r.code == 0, r.error);
    const std::string svg = test::read_text(svg_path);
    CHECK(svg.find("write gate g^w_t over the admission's " + std::string(view)) !=
          std::string::npos);
    // The bars, "CODE: gate" in their titles, are inspect's codes and gates, in order.
    std::string codes;
    for (const auto& line : shown["sample"])
      if (line[0] == view) codes = line[1];
    std::vector<double> gates;
    for (const auto& series : shown["series"])
      if (series["name"] == encoder)
        for (const auto& v : series["values"]) gates.push_back(v[0].get<double>());
    std::vector<std::string> expected;
    std::istringstream list(codes);
    for (std::string code; std::getline(list >> std::ws, code, ',');) expected.push_back(code);
    if (gates.size() > expected.size()) expected.push_back("end");
    REQUIRE(gates.size() == expected.size());
    const std::regex bar("<title>([^<:]+): ([0-9.]+)</title>");
    size_t i = 0;
    for (auto m = std::sregex_iterator(svg.begin(), svg.end(), bar); m != std::sregex_iterator();
         ++m, ++i) {
      REQUIRE(i < gates.size());
      CHECK((*m)[1] == expected[i]);
      char gate[32];
      std::snprintf(gate, sizeof gate, "%.4f", gates[i]);
      CHECK((*m)[2] == std::string(gate));
    }
    CHECK(i == gates.size());
  }
}
