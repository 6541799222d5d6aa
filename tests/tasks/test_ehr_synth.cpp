// The synthetic MIMIC-format EHR: the loader reads what the generator writes (counts agree, the
// quirks it plants are counted), the planted rules hold in the data, the ceiling is written, and a
// failed or refused run leaves no half-written folder.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/error.hpp"
#include "engine/json_text.hpp"
#include "tasks/ehr_synth.hpp"
#include "tasks/mimic_ehr.hpp"
#include "tests/test_util.hpp"

using namespace memgrad;
using namespace memgrad::test;
namespace fs = std::filesystem;

TEST_CASE("ehr-gen: the loader reads the generated tables; the planted rules hold") {
  TempDir tmp;
  ehr_synth::Options o;
  o.patients = 6000;
  o.dx_codes = 400;
  o.proc_codes = 200;
  o.rule_drugs = 12;
  o.tail_drugs = 4;
  o.gzip = true;
  const std::string dir = (tmp.path / "ehr").string();
  const ehr_synth::Summary s = ehr_synth::generate(o, dir);
  CHECK(s.patients == 6000);
  CHECK(s.admissions > 7000);  // 1.231 per patient expected: ~7,390
  CHECK(s.admissions < 7800);
  CHECK_FALSE(fs::exists(dir + ".partial"));
  const mimic::Ehr e = mimic::load({.data_dir = dir});
  CHECK(int64_t(e.admissions.size()) == s.admissions);
  CHECK(int64_t(e.patients.size()) == s.patients);
  CHECK(e.quirks.dx_rows == s.dx_rows);
  CHECK(e.quirks.proc_rows == s.proc_rows);
  CHECK(e.quirks.drug_rows == s.drug_rows);
  CHECK(e.quirks.dx_no_code > 0);  // the planted empty rows, about 1 in 1,000 admissions
  CHECK(e.quirks.drug_no_route > 0);
  CHECK(e.quirks.drug_repeated > 0);

  // The single-view rule drugs (types dx and proc): given with ~90 % when a code of their set is
  // there, ~1 % otherwise (pooled over the drugs of those types).
  std::ifstream in(dir + "/rules.json");
  const nlohmann::json rules = parse_json(in);
  int with = 0, with_drug = 0, without = 0, without_drug = 0;
  for (const nlohmann::json& r : rules.at("drugs")) {
    const bool dx = r.at("type") == "dx";
    if (!dx && r.at("type") != "proc") continue;
    for (const mimic::Admission& a : e.admissions) {
      bool fired = false, has = false;
      for (int32_t c : dx ? a.dx : a.proc)
        for (const auto& code : r.at(dx ? "dx" : "proc"))
          fired = fired || (dx ? e.dx_codes : e.proc_codes)[size_t(c)] == code;
      for (int32_t d : a.drugs) has = has || e.drug_codes[size_t(d)] == r.at("drug");
      (fired ? with : without) += 1;
      (fired ? with_drug : without_drug) += has;
    }
  }
  REQUIRE(with > 300);
  CHECK(double(with_drug) / with == doctest::Approx(0.9).epsilon(0.06));
  CHECK(double(without_drug) / without == doctest::Approx(0.01).epsilon(0.3));

  std::ifstream c(dir + "/ceiling.json");
  const nlohmann::json ceiling = parse_json(c);
  CHECK(ceiling.at("auc_macro").get<double>() > 0.6);
  CHECK(ceiling.at("auc_macro_proc").get<double>() > 0.8);

  // The same seed writes the same data; an existing folder is refused.
  CHECK(error_of([&] { ehr_synth::generate(o, dir); }) ==
        dir + ": exists (choose another folder, or --overwrite)");
}

TEST_CASE(
    "ehr-gen: follow_pairs plants a diagnosis two admissions after its trigger, and only that") {
  TempDir tmp;
  ehr_synth::Options o;
  o.patients = 3000;
  o.extra_admission = 0.7;  // several admissions per patient
  o.dx_codes = 400;
  o.proc_codes = 200;
  o.rule_drugs = 6;
  o.tail_drugs = 0;
  const std::string plain = (tmp.path / "plain").string(), with = (tmp.path / "with").string();
  ehr_synth::generate(o, plain);
  o.follow_pairs = 5;
  ehr_synth::generate(o, with);
  std::ifstream in(with + "/rules.json");
  const nlohmann::json rules = parse_json(in);
  REQUIRE(rules.at("follow").at("pairs").size() == 5);
  const mimic::Ehr a = mimic::load({.data_dir = plain}), b = mimic::load({.data_dir = with});
  REQUIRE(a.admissions.size() == b.admissions.size());  // the same admissions
  auto id_of = [](const mimic::Ehr& e, const std::string& code) {
    for (size_t i = 0; i < e.dx_codes.size(); ++i)
      if (e.dx_codes[i] == code) return int32_t(i);
    return int32_t(-1);
  };
  auto has = [](const std::vector<int32_t>& v, int32_t c) {
    return c >= 0 && std::find(v.begin(), v.end(), c) != v.end();
  };
  int64_t triggered = 0, followed = 0, added_elsewhere = 0;
  for (const nlohmann::json& pair : rules["follow"]["pairs"]) {
    const int32_t trigger = id_of(b, pair.at("trigger")), follows = id_of(b, pair.at("follows"));
    for (const mimic::Patient& p : b.patients)
      for (size_t k = 2; k < p.admissions.size(); ++k) {
        const mimic::Admission& now = b.admissions[size_t(p.admissions[k])];
        if (has(b.admissions[size_t(p.admissions[k - 2])].dx, trigger)) {
          ++triggered;
          followed += has(now.dx, follows);
        }
      }
  }
  // Everything but the added diagnoses is unchanged: each admission's diagnoses in `plain` are
  // the first ones of the same admission in `with`.
  for (size_t i = 0; i < a.admissions.size(); ++i) {
    const auto &x = a.admissions[i].dx, &y = b.admissions[i].dx;
    REQUIRE(y.size() >= x.size());
    for (size_t j = 0; j < x.size(); ++j)
      added_elsewhere += a.dx_codes[size_t(x[j])] != b.dx_codes[size_t(y[j])];
  }
  CHECK(added_elsewhere == 0);
  REQUIRE(triggered > 100);
  CHECK(double(followed) / double(triggered) > 0.85);  // 0.9 planted (or drawn anyway)
  CHECK_THROWS_AS(ehr_synth::generate({.follow_pairs = 41}, (tmp.path / "bad").string()), Error);
}

TEST_CASE(
    "ehr-gen: either_drugs turns the base drugs into dx-or-proc-not-both drugs, and only "
    "those") {
  TempDir tmp;
  ehr_synth::Options o;
  o.patients = 6000;
  o.dx_codes = 400;
  o.proc_codes = 200;
  o.rule_drugs = 12;  // types 0-5 twice: drugs R5 and R11 are base, or either with the option
  o.tail_drugs = 2;
  const std::string plain = (tmp.path / "plain").string(), with = (tmp.path / "with").string();
  ehr_synth::generate(o, plain);
  o.either_drugs = true;
  ehr_synth::generate(o, with);
  std::ifstream in(with + "/rules.json");
  const nlohmann::json rules = parse_json(in);
  const mimic::Ehr a = mimic::load({.data_dir = plain}), b = mimic::load({.data_dir = with});
  REQUIRE(a.admissions.size() == b.admissions.size());
  auto drug_set = [](const mimic::Ehr& e, const mimic::Admission& adm, bool either_only) {
    std::vector<std::string> out;
    for (int32_t d : adm.drugs) {
      const std::string& code = e.drug_codes[size_t(d)];
      if ((code == "R5" || code == "R11") == either_only) out.push_back(code);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  int64_t changed_elsewhere = 0;
  for (size_t i = 0; i < a.admissions.size(); ++i) {
    changed_elsewhere += a.admissions[i].dx != b.admissions[i].dx;
    changed_elsewhere += a.admissions[i].proc != b.admissions[i].proc;
    changed_elsewhere += drug_set(a, a.admissions[i], false) != drug_set(b, b.admissions[i], false);
  }
  CHECK(changed_elsewhere == 0);

  // Given with ~90 % when exactly one view fires, ~1 % when both or neither: the admissions with
  // both are the ones a monotone score would put first.
  int64_t count[3] = {0, 0, 0}, given[3] = {0, 0, 0};  // by the number of views that fire
  for (const nlohmann::json& r : rules.at("drugs")) {
    if (r.at("type") != "either") continue;
    REQUIRE(r.at("dx").size() == 4);  // among ranks 4-20 and 2-8 (D3..D19, P1..P7)
    REQUIRE(r.at("proc").size() == 3);
    for (const auto& code : r.at("dx")) {
      const int rank = std::stoi(code.get<std::string>().substr(1));
      CHECK((rank >= 3 && rank <= 19));
    }
    for (const auto& code : r.at("proc")) {
      const int rank = std::stoi(code.get<std::string>().substr(1));
      CHECK((rank >= 1 && rank <= 7));
    }
    for (const mimic::Admission& adm : b.admissions) {
      bool in_dx = false, in_proc = false, has = false;
      for (int32_t c : adm.dx)
        for (const auto& code : r.at("dx")) in_dx = in_dx || b.dx_codes[size_t(c)] == code;
      for (int32_t c : adm.proc)
        for (const auto& code : r.at("proc")) in_proc = in_proc || b.proc_codes[size_t(c)] == code;
      for (int32_t d : adm.drugs) has = has || b.drug_codes[size_t(d)] == r.at("drug");
      const int views = int(in_dx) + int(in_proc);
      ++count[views];
      given[views] += has;
    }
  }
  REQUIRE(count[0] > 300);
  REQUIRE(count[1] > 300);
  REQUIRE(count[2] > 100);
  // Common codes: "both" (negatives that a score adding per-code weights puts first) is not rare.
  CHECK(count[2] * 4 > count[1]);
  CHECK(double(given[0]) / double(count[0]) < 0.03);
  CHECK(double(given[1]) / double(count[1]) == doctest::Approx(0.9).epsilon(0.06));
  CHECK(double(given[2]) / double(count[2]) < 0.05);

  std::ifstream c(with + "/ceiling.json");
  const nlohmann::json ceiling = parse_json(c);
  CHECK(ceiling.at("auc_macro_either").get<double>() > 0.8);
  CHECK_FALSE(ceiling.contains("auc_macro_base"));
}
