// The counted facts of the MIMIC-III and MIMIC-IV demos (their SOURCE.md and the planning notes'
// section 3, recounted with Python's csv module): admissions, patients, rows, the quirks the loader
// counts, the admissions with all three views; and the mimic-drugs splits on them.
#include <doctest/doctest.h>

#include "tasks/mimic_drugs.hpp"
#include "tasks/mimic_ehr.hpp"
#include "tests/test_util.hpp"

using namespace memgrad;

namespace {
const std::string kMimic3 = memgrad::test::shared_path("data/mimic-iii-demo");
const std::string kMimic4 = memgrad::test::shared_path("data/mimic-iv-demo");

int64_t full(const mimic::Ehr& e) {
  int64_t n = 0;
  for (const mimic::Admission& a : e.admissions)
    n += !a.dx.empty() && !a.proc.empty() && !a.drugs.empty();
  return n;
}
}  // namespace

TEST_CASE("mimic real data: the MIMIC-III demo's tables" *
          doctest::test_suite(memgrad::test::kSharedData)) {
  if (!memgrad::test::shared_data_present(kMimic3)) return;
  const mimic::Ehr e = mimic::load({.data_dir = kMimic3});
  CHECK(e.layout == mimic::Layout::mimic3);
  CHECK(e.admissions.size() == 129);
  CHECK(e.patients.size() == 100);
  CHECK(e.dx_codes.size() == 581);
  CHECK(e.proc_codes.size() == 164);
  CHECK(e.drug_codes.size() == 823);  // FORMULARY_DRUG_CD over all prescriptions
  CHECK(full(e) == 107);
  const mimic::Quirks& q = e.quirks;
  CHECK(q.dx_rows == 1761);
  CHECK(q.proc_rows == 506);
  CHECK(q.drug_rows == 10398);
  CHECK(q.proc_repeated == 20);
  CHECK(q.drug_no_code == 1);
  CHECK(q.drug_repeated == 4837);
  CHECK(q.dx_no_seq + q.dx_no_code + q.dx_repeated == 0);
  // Patients by first admission time.
  for (size_t p = 1; p < e.patients.size(); ++p)
    CHECK(e.admissions[size_t(e.patients[p - 1].admissions[0])].admit_time <=
          e.admissions[size_t(e.patients[p].admissions[0])].admit_time);
  size_t multi = 0;
  for (const mimic::Patient& p : e.patients) multi += p.admissions.size() >= 2;
  CHECK(multi == 14);

  const auto dx_titles = mimic::read_titles(kMimic3, e.layout, "D_ICD_DIAGNOSES");
  CHECK(dx_titles.size() == 14567);
  CHECK(dx_titles.at("4019") == "Hypertension NOS");
  CHECK(mimic::read_titles(kMimic3, e.layout, "D_ICD_PROCEDURES").size() == 3882);

  mimic::DrugOptions o;
  o.load.data_dir = kMimic3;
  const mimic::DrugData d = mimic::make_drug_data(o);
  CHECK(d.patients[0] + d.patients[1] + d.patients[2] == 82);
  CHECK(d.train.size() + d.valid.size() + d.test.size() == 107);
  CHECK(d.labels() == 300);
}

TEST_CASE("mimic real data: the MIMIC-IV demo's hosp/ tables, ICD-9 and ICD-10" *
          doctest::test_suite(memgrad::test::kSharedData)) {
  if (!memgrad::test::shared_data_present(kMimic4)) return;
  const mimic::Ehr e = mimic::load({.data_dir = kMimic4});
  CHECK(e.layout == mimic::Layout::mimic4);
  CHECK(e.admissions.size() == 275);
  CHECK(e.patients.size() == 100);
  CHECK(e.dx_codes.size() == 1474);  // distinct (version, code)
  CHECK(e.proc_codes.size() == 352);
  CHECK(e.drug_codes.size() == 937);
  CHECK(full(e) == 186);
  const mimic::Quirks& q = e.quirks;
  CHECK(q.dx_rows == 4506);
  CHECK(q.proc_rows == 722);
  CHECK(q.drug_rows == 18087);
  CHECK(q.icd9 == 2193 + 401);  // diagnoses and procedures
  CHECK(q.icd10 == 2313 + 321);
  CHECK(q.proc_repeated == 55);
  CHECK(q.drug_no_code == 12);
  CHECK(q.drug_no_route == 6);
  CHECK(q.drug_repeated == 7812);
  const auto dx_titles = mimic::read_titles(kMimic4, e.layout, "D_ICD_DIAGNOSES");
  CHECK(dx_titles.size() == 109775);
  CHECK(dx_titles.at("10:I10") == "Essential (primary) hypertension");
}
