// The MIMIC loaders on small tables written here: the streaming CSV reader (quotes, CRLF, gzip,
// its errors with file and line), the MIMIC-III and MIMIC-IV layouts (SEQ_NUM order, patients by
// admission time, ICD versions, the quirks counted), bad input named by file, line and column, and
// the mimic-drugs data (patient splits, training-only vocabularies, batches).
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "engine/error.hpp"
#include "tasks/csv_stream.hpp"
#include "tasks/mimic_drugs.hpp"
#include "tasks/mimic_ehr.hpp"
#include "tasks/task.hpp"
#include "tests/tasks/mimic_fixture.hpp"
#include "tests/test_util.hpp"

using namespace memgrad;
using namespace memgrad::test;
namespace fs = std::filesystem;
namespace fx = memgrad::test::mimic_fixture;

namespace {

std::vector<std::vector<std::string>> read_all(const fs::path& path) {
  CsvReader csv(path.string());
  std::vector<std::vector<std::string>> rows;
  while (csv.next()) rows.push_back(csv.fields());
  return rows;
}

}  // namespace

TEST_CASE("csv: quoted fields keep commas, doubled quotes and line breaks; CRLF and BOM") {
  TempDir tmp;
  const fs::path p = tmp.path / "t.csv";
  fx::write(p,
            "\xEF\xBB\xBF\"A\",\"b\",C\r\n1,\"x, y\",\"say "
            "\"\"hi\"\"\"\r\n\r\n2,\"two\nlines\",\r\n3,,z");
  CsvReader csv(p.string());
  CHECK(csv.header() == std::vector<std::string>{"A", "b", "C"});
  CHECK(csv.column("a") == 0);
  CHECK(csv.column("B") == 1);
  REQUIRE(csv.next());
  CHECK(csv.line() == 2);
  CHECK(csv.fields() == std::vector<std::string>{"1", "x, y", "say \"hi\""});
  REQUIRE(csv.next());
  CHECK(csv.line() == 4);
  CHECK(csv.fields() == std::vector<std::string>{"2", "two\nlines", ""});
  REQUIRE(csv.next());
  CHECK(csv.line() == 6);  // the quoted line break counted
  CHECK(csv.fields() == std::vector<std::string>{"3", "", "z"});
  CHECK_FALSE(csv.next());
  CHECK(csv.records() == 3);
}

TEST_CASE("csv: a .csv.gz reads as the plain file does, across buffer refills") {
  TempDir tmp;
  std::string text = "id,name\n";
  for (int i = 0; i < 20000; ++i) text += std::to_string(i) + ",\"n" + std::to_string(i) + "\"\n";
  fx::write(tmp.path / "t.csv", text);
  fx::write_gz(tmp.path / "t.csv.gz", text);
  const auto plain = read_all(tmp.path / "t.csv"), gz = read_all(tmp.path / "t.csv.gz");
  CHECK(plain.size() == 20000);
  CHECK(plain == gz);
  CHECK(gz.back() == std::vector<std::string>{"19999", "n19999"});
}

TEST_CASE("csv: bad input names the file and line") {
  TempDir tmp;
  auto error = [&](const std::string& text) {
    const fs::path p = tmp.path / "bad.csv";
    fx::write(p, text);
    return error_of([&] { read_all(p); });
  };
  const std::string p = (tmp.path / "bad.csv").string();
  CHECK(error("a,b\n1,2\n3\n") == p + ":3: 1 fields, the header has 2");
  CHECK(error("a,b\n1,2,3\n") == p + ":2: 3 fields, the header has 2");
  CHECK(error("a,b\n1,\"open\n2,3\n") == p + ":2: column 2: quoted field never closed");
  CHECK(contains(error("a,b\n1,\"x\"y\n"), p + ":2: column 2: text after a closing quote"));
  CHECK(contains(error("a,b\n1,x\"y\n"), p + ":2: column 2: quote inside an unquoted field"));
  CHECK(error("") == p + ": empty file (no header)");
  CHECK(contains(error_of([&] { CsvReader c((tmp.path / "none.csv").string()); }),
                 "none.csv: cannot open"));
  // A gzip file cut short.
  std::string text = "a,b\n";
  for (int i = 0; i < 5000; ++i) text += std::to_string(i) + ",x\n";
  fx::write_gz(tmp.path / "cut.csv.gz", text);
  const auto size = fs::file_size(tmp.path / "cut.csv.gz");
  fs::resize_file(tmp.path / "cut.csv.gz", size / 2);
  CHECK(contains(error_of([&] { read_all(tmp.path / "cut.csv.gz"); }), "gzip data"));
  fx::write(tmp.path / "bad.csv", "a,b\n");
  CsvReader ok((tmp.path / "bad.csv").string());
  CHECK(error_of([&] { (void)ok.column("zz"); }) == p + ":1: no column 'zz' (columns: a, b)");
}

TEST_CASE("mimic: drug names are the DRUG on most of a formulary code's rows, first of a tie") {
  TempDir tmp;
  fx::Tables t = fx::make_tables(2);
  // NACL: "NaCl 0.9%" on each of the 3 admissions' rows; two more rows say "Sodium chloride",
  // so the fixture's name still wins 3 to 2. KCL: one row each of two names, the first wins.
  // A row without a name is skipped; a code not asked for is not counted.
  for (const char* row :
       {"90,100,1000,\"Sodium chloride\",\"NACL\",\"IV\"\n",
        "91,100,1000,\"Sodium chloride\",\"NACL\",\"IV\"\n",
        "92,100,1000,\"KCl 20 mEq\",\"KCL\",\"PO\"\n",
        "93,100,1000,\"Potassium chloride\",\"KCL\",\"PO\"\n", "94,100,1000,,\"EMPTY\",\"PO\"\n"})
    t.prescriptions += row;
  fx::write_tables(tmp.path, t, /*gz=*/true);
  const auto names =
      mimic::read_drug_names(tmp.path.string(), mimic::Layout::mimic3, "formulary_drug_cd", "drug",
                             {"NACL", "KCL", "EMPTY", "NOPE"});
  CHECK(names.size() == 2);
  CHECK(names.at("NACL") == "NaCl 0.9%");
  CHECK(names.at("KCL") == "KCl 20 mEq");
  CHECK_FALSE(names.contains("EMPTY"));
  CHECK_FALSE(names.contains("D40"));
  CHECK_THROWS_WITH_AS(
      mimic::read_drug_names(tmp.path.string(), mimic::Layout::mimic3, "ndc", "drug", {"NACL"}),
      doctest::Contains("no column 'ndc'"), Error);
}

TEST_CASE("mimic: MIMIC-III tables: SEQ_NUM order, patients by admission time, drug sets") {
  TempDir tmp;
  for (bool gz : {false, true}) {
    const fs::path dir = tmp.path / (gz ? "gz" : "plain");
    fx::write_tables(dir, fx::make_tables(6), gz);
    const mimic::Ehr e = mimic::load({.data_dir = dir.string()});
    CHECK(e.layout == mimic::Layout::mimic3);
    REQUIRE(e.admissions.size() == 9);  // 6 patients, 3 with two admissions
    REQUIRE(e.patients.size() == 6);
    // Patient 0: admission 1000, diagnoses written 3, 2, 1 and read back in SEQ_NUM order.
    const mimic::Admission& a = e.admissions[0];
    CHECK(a.hadm == 1000);
    std::vector<std::string> dx;
    for (int32_t c : a.dx) dx.push_back(e.dx_codes[size_t(c)]);
    CHECK(dx == std::vector<std::string>{"40", "45", "412"});
    CHECK(a.drugs.size() == 5);
    CHECK(std::is_sorted(a.drugs.begin(), a.drugs.end()));
    // Patients by first admission (day 1 + p), admissions in time order.
    for (size_t p = 0; p < 6; ++p) CHECK(e.patients[p].subject == int64_t(100 + p));
    REQUIRE(e.patients[1].admissions.size() == 2);
    CHECK(e.admissions[size_t(e.patients[1].admissions[0])].hadm == 1010);
    CHECK(e.admissions[size_t(e.patients[1].admissions[1])].hadm == 1011);
    CHECK(e.quirks.dx_rows == 27);
    CHECK(e.quirks.drug_rows == 45);
  }
}

TEST_CASE("mimic: the rows MIMIC really has are kept or dropped as documented, and counted") {
  TempDir tmp;
  fx::Tables t = fx::make_tables(3);
  // Admission 1000: a diagnosis without SEQ_NUM (kept last), one without a code (dropped), a
  // repeated code (dropped); a prescription without a route (kept), one without a drug code
  // (dropped), one without an admission (dropped), and a repeated drug.
  t.diagnoses += "90,100,1000,,\"V101\"\n91,100,1000,4,\n92,100,1000,5,\"40\"\n";
  t.procedures += "93,100,1000,,\"991\"\n";
  t.prescriptions +=
      "94,100,1000,\"x\",\"NEW\",\n95,100,1000,\"x\",,\"PO\"\n"
      "96,100,,\"x\",\"ZZZ\",\"PO\"\n97,100,1000,\"x\",\"NACL\",\"IV\"\n";
  fx::write_tables(tmp.path, t);
  const mimic::Ehr e = mimic::load({.data_dir = tmp.path.string()});
  const mimic::Admission& a = e.admissions[0];
  std::vector<std::string> dx, proc;
  for (int32_t c : a.dx) dx.push_back(e.dx_codes[size_t(c)]);
  for (int32_t c : a.proc) proc.push_back(e.proc_codes[size_t(c)]);
  CHECK(dx == std::vector<std::string>{"40", "45", "412", "V101"});
  CHECK(proc == std::vector<std::string>{"990", "991"});
  CHECK(a.drugs.size() == 6);  // 5 + NEW
  const mimic::Quirks& q = e.quirks;
  CHECK(q.dx_no_seq == 1);
  CHECK(q.dx_no_code == 1);
  CHECK(q.dx_repeated == 1);
  CHECK(q.proc_no_seq == 1);
  CHECK(q.drug_no_route == 1);
  CHECK(q.drug_no_code == 1);
  CHECK(q.drug_no_admission == 1);
  CHECK(q.drug_repeated == 1);
  CHECK(contains(q.summary(), "1 without SEQ_NUM put last"));
}

TEST_CASE("mimic: MIMIC-IV hosp/ layout with ICD-9 and ICD-10 told apart by icd_version") {
  TempDir tmp;
  const fs::path hosp = tmp.path / "hosp";
  fs::create_directories(hosp);
  fx::write_gz(
      hosp / "admissions.csv.gz",
      "subject_id,hadm_id,admittime\n1,11,2180-05-06 22:23:00\n2,21,2170-01-01 00:00:00\n");
  fx::write_gz(hosp / "diagnoses_icd.csv.gz",
               "subject_id,hadm_id,seq_num,icd_code,icd_version\n1,11,2,4019,9\n1,11,1,I10,10\n"
               "2,21,1,4019,10\n");
  fx::write(
      hosp / "procedures_icd.csv",
      "subject_id,hadm_id,seq_num,chartdate,icd_code,icd_version\n1,11,1,2180-05-07,0QS734Z,10\n");
  fx::write_gz(hosp / "prescriptions.csv.gz",
               "subject_id,hadm_id,drug,formulary_drug_cd,route\n1,11,Heparin,HEPA5I,SC\n");
  const mimic::Ehr e = mimic::load({.data_dir = tmp.path.string()});
  CHECK(e.layout == mimic::Layout::mimic4);
  std::vector<std::string> dx;
  for (int32_t c : e.admissions[0].dx) dx.push_back(e.dx_codes[size_t(c)]);
  CHECK(dx == std::vector<std::string>{"10:I10", "9:4019"});
  CHECK(e.dx_codes.size() == 3);  // "10:4019" is another code than "9:4019"
  CHECK(e.quirks.icd9 == 1);
  CHECK(e.quirks.icd10 == 3);
  CHECK(e.patients[0].subject == 2);  // admitted first
  // Drugs by name instead of formulary code.
  const mimic::Ehr by_name = mimic::load({.data_dir = tmp.path.string(), .drug_column = "drug"});
  CHECK(by_name.drug_codes == std::vector<std::string>{"Heparin"});
  // An unknown version.
  fx::write(
      hosp / "procedures_icd.csv",
      "subject_id,hadm_id,seq_num,chartdate,icd_code,icd_version\n1,11,1,2180-05-07,0QS,11\n");
  CHECK(error_of([&] { mimic::load({.data_dir = tmp.path.string()}); }) ==
        (hosp / "procedures_icd.csv").string() +
            ":2: column icd_version: unknown ICD version '11' (9 or 10)");
}

TEST_CASE("mimic: bad input is one line naming the file, line and column") {
  TempDir tmp;
  const fx::Tables good = fx::make_tables(3);
  auto error = [&](fx::Tables t) {
    fs::remove_all(tmp.path / "d");
    fx::write_tables(tmp.path / "d", t);
    return error_of([&] { mimic::load({.data_dir = (tmp.path / "d").string()}); });
  };
  const std::string d = (tmp.path / "d").string();
  fx::Tables t = good;
  t.diagnoses += "99,100,4242,1,\"401\"\n";  // line 11
  CHECK(error(t) == d + "/DIAGNOSES_ICD.csv:14: column HADM_ID: admission 4242 is not in "
                        "ADMISSIONS");
  t = good;
  t.prescriptions += "99,101,1000,\"x\",\"ASA\",\"PO\"\n";
  CHECK(error(t) == d + "/PRESCRIPTIONS.csv:22: column SUBJECT_ID: admission 1000 belongs to "
                        "patient 100 in ADMISSIONS, not 101");
  t = good;
  t.procedures += "99,100,1000,x1,\"401\"\n";
  CHECK(error(t) == d + "/PROCEDURES_ICD.csv:6: column SEQ_NUM: not a whole number: 'x1'");
  t = good;
  t.admissions += "99,200,2000,2150-13-01 00:00:00,\"\"\n";
  CHECK(error(t) == d + "/ADMISSIONS.csv:6: column ADMITTIME: not a time (YYYY-MM-DD HH:MM:SS): "
                        "'2150-13-01 00:00:00'");
  t = good;
  t.admissions += "99,200,1000,2150-01-01 00:00:00,\"\"\n";
  CHECK(error(t) == d + "/ADMISSIONS.csv:6: column HADM_ID: admission 1000 listed twice");
  t = good;
  t.diagnoses.replace(t.diagnoses.find("\"ICD9_CODE\""), 11, "\"CODE\"");
  CHECK(error(t) == d + "/DIAGNOSES_ICD.csv:1: no column 'icd9_code' (columns: ROW_ID, "
                        "SUBJECT_ID, HADM_ID, SEQ_NUM, CODE)");
  t = good;
  t.diagnoses += "99,100,1000,1\n";
  CHECK(error(t) == d + "/DIAGNOSES_ICD.csv:14: 4 fields, the header has 5");
  fs::remove(tmp.path / "d" / "PROCEDURES_ICD.csv");
  CHECK(error_of([&] { mimic::load({.data_dir = d}); }) ==
        d + ": missing table PROCEDURES_ICD (no " + d + "/PROCEDURES_ICD.csv or .csv.gz)");
  CHECK(contains(error_of([&] { mimic::load({.data_dir = (tmp.path / "none").string()}); }),
                 "none: no such folder"));
}

TEST_CASE("mimic: parse_time reads MIMIC's shifted dates") {
  int64_t s = 0;
  REQUIRE(mimic::parse_time("1970-01-02 00:00:01", s));
  CHECK(s == 86401);
  REQUIRE(mimic::parse_time("2164-10-23", s));
  int64_t later = 0;
  REQUIRE(mimic::parse_time("2164-10-23 21:09:00", later));
  CHECK(later - s == 21 * 3600 + 9 * 60);
  for (const char* bad : {"", "2164-10-23 21:09", "2164-02-30 00:00:00", "2164/10/23", "x"})
    CHECK_FALSE(mimic::parse_time(bad, s));
}

TEST_CASE("mimic-drugs: patient splits 2/3 : 1/6 : 1/6, vocabularies from training only") {
  TempDir tmp;
  fx::write_tables(tmp.path, fx::make_tables(24));
  mimic::DrugOptions o;
  o.load.data_dir = tmp.path.string();
  o.top_drugs = 6;
  const mimic::DrugData d = mimic::make_drug_data(o);
  CHECK(d.patients[0] == 16);
  CHECK(d.patients[1] == 4);
  CHECK(d.patients[2] == 4);
  CHECK(d.full_admissions == 36);
  // No patient in two splits.
  std::set<int64_t> seen[3];
  const std::vector<mimic::DrugSample>* splits[3] = {&d.train, &d.valid, &d.test};
  for (int s = 0; s < 3; ++s)
    for (const auto& x : *splits[s]) seen[s].insert(d.ehr.admissions[size_t(x.admission)].subject);
  for (int s = 0; s < 3; ++s)
    for (int r = s + 1; r < 3; ++r)
      for (int64_t id : seen[s]) CHECK(seen[r].count(id) == 0);
  // The top drug is NACL (every admission); labels are sorted indices < 6.
  CHECK(d.ehr.drug_codes[size_t(d.drug_vocab[0])] == "NACL");
  CHECK(d.labels() == 6);
  for (const auto& x : d.test) {
    CHECK(std::is_sorted(x.labels.begin(), x.labels.end()));
    CHECK(x.labels.front() == 0);
  }
  // Vocabulary codes all occur in training admissions.
  std::set<int32_t> train_dx;
  for (const auto& x : d.train)
    for (int32_t c : d.ehr.admissions[size_t(x.admission)].dx) train_dx.insert(c);
  CHECK(d.dx_vocab.size() == train_dx.size());
  for (int32_t c : d.dx_vocab) CHECK(train_dx.count(c) == 1);
  // Another seed, another split.
  o.split_seed = 7;
  const mimic::DrugData d7 = mimic::make_drug_data(o);
  std::set<int64_t> test7;
  for (const auto& x : d7.test) test7.insert(d7.ehr.admissions[size_t(x.admission)].subject);
  CHECK(test7 != seen[2]);

  // A batch: tokens, masks and multi-hot labels.
  Batch batch;
  const int64_t which[2] = {0, 1};
  mimic::fill_batch(d, d.test, which, DType::f32, batch);
  const Tensor& x1 = batch.get("x1");
  CHECK(x1.shape() == Shape{2, 3});
  CHECK(batch.get("x2").shape() == Shape{2, 1});
  const Tensor& labels = batch.get("labels");
  CHECK(labels.shape() == Shape{2, 6});
  for (int64_t i = 0; i < 3; ++i) CHECK(x1.at(i) >= 1);  // every test admission has 3 codes
  for (int32_t l : d.test[1].labels) CHECK(labels.at(6 + l) == 1);
  mimic::largest_batch(d, 4, DType::f32, batch);
  CHECK(batch.get("x1").shape() == Shape{4, d.longest_dx});
}

TEST_CASE("mimic-drugs: too few patients for three splits is an Error") {
  TempDir tmp;
  fx::write_tables(tmp.path, fx::make_tables(2));
  mimic::DrugOptions o;
  o.load.data_dir = tmp.path.string();
  CHECK(contains(error_of([&] { mimic::make_drug_data(o); }), "the three splits need at least 3"));
}

TEST_CASE("mimic-drugs: select_on names the validation metric that keeps an epoch") {
  TempDir tmp;
  fx::write_tables(tmp.path, fx::make_tables(24));
  const std::string dir = tmp.path.string();
  CHECK(create_task("mimic-drugs", {{"data_dir", dir}})->selection_metric() == "valid_auc_micro");
  CHECK(create_task("mimic-drugs", {{"data_dir", dir}, {"select_on", "auc_macro"}})
            ->selection_metric() == "valid_auc_macro");
  CHECK(contains(error_of([&] {
                   create_task("mimic-drugs", {{"data_dir", dir}, {"select_on", "p_at_1"}});
                 }),
                 "select_on (--select-on) must be auc_micro, auc_macro or f1, got 'p_at_1'"));
}
