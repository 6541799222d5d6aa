// Small MIMIC-III-format tables written by a test: ADMISSIONS, DIAGNOSES_ICD, PROCEDURES_ICD and
// PRESCRIPTIONS of `patients` made-up patients (quoted fields as MIMIC writes them), each with one
// or two admissions; drugs follow the codes (D<dx> for every diagnosis, P<proc> for every
// procedure, and "NACL" always), so a model can learn them.
#pragma once
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/test_util.hpp"

namespace memgrad::test::mimic_fixture {

inline void write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// `text` gzip-compressed into `path`.
inline void write_gz(const std::filesystem::path& path, const std::string& text) {
  gzFile gz = gzopen(path.string().c_str(), "wb");
  REQUIRE(gz != nullptr);
  REQUIRE(gzwrite(gz, text.data(), unsigned(text.size())) == int(text.size()));
  REQUIRE(gzclose(gz) == Z_OK);
}

struct Tables {
  std::string admissions, diagnoses, procedures, prescriptions;
};

// Patient p (subject 100 + p) has admission 1000 + 10 p at day 2150-01-(1 + p % 28) and, for odd
// p, a second one (1000 + 10 p + 1) a year later. Diagnoses are written in reverse SEQ_NUM order.
inline Tables make_tables(int patients) {
  Tables t;
  t.admissions = "\"ROW_ID\",\"SUBJECT_ID\",\"HADM_ID\",\"ADMITTIME\",\"DIAGNOSIS\"\n";
  t.diagnoses = "\"ROW_ID\",\"SUBJECT_ID\",\"HADM_ID\",\"SEQ_NUM\",\"ICD9_CODE\"\n";
  t.procedures = t.diagnoses;
  t.prescriptions =
      "\"ROW_ID\",\"SUBJECT_ID\",\"HADM_ID\",\"DRUG\",\"FORMULARY_DRUG_CD\",\"ROUTE\"\n";
  int row = 1;
  for (int p = 0; p < patients; ++p) {
    const std::string subject = std::to_string(100 + p);
    for (int k = 0; k < 1 + p % 2; ++k) {
      const std::string hadm = std::to_string(1000 + 10 * p + k);
      const std::string day = std::to_string(1 + p % 28);
      t.admissions += std::to_string(row++) + "," + subject + "," + hadm + "," +
                      std::to_string(2150 + k) + "-01-" + (day.size() < 2 ? "0" : "") + day +
                      " 10:00:00,\"FEVER, CHILLS\"\n";
      const int dx[3] = {p % 5, (p + k) % 7 + 5, 12 + p % 3};
      for (int s = 3; s >= 1; --s)
        t.diagnoses += std::to_string(row++) + "," + subject + "," + hadm + "," +
                       std::to_string(s) + ",\"4" + std::to_string(dx[s - 1]) + "\"\n";
      const int proc = p % 4;
      t.procedures += std::to_string(row++) + "," + subject + "," + hadm + ",1,\"99" +
                      std::to_string(proc) + "\"\n";
      for (int s = 0; s < 3; ++s)
        t.prescriptions += std::to_string(row++) + "," + subject + "," + hadm + ",\"drug\",\"D4" +
                           std::to_string(dx[s]) + "\",\"PO\"\n";
      t.prescriptions += std::to_string(row++) + "," + subject + "," + hadm + ",\"drug\",\"P99" +
                         std::to_string(proc) + "\",\"IV\"\n";
      t.prescriptions +=
          std::to_string(row++) + "," + subject + "," + hadm + ",\"NaCl 0.9%\",\"NACL\",\"IV\"\n";
    }
  }
  return t;
}

inline void write_tables(const std::filesystem::path& dir, const Tables& t, bool gz = false) {
  std::filesystem::create_directories(dir);
  auto put = [&](const char* name, const std::string& text) {
    if (gz)
      write_gz(dir / (std::string(name) + ".csv.gz"), text);
    else
      write(dir / (std::string(name) + ".csv"), text);
  };
  put("ADMISSIONS", t.admissions);
  put("DIAGNOSES_ICD", t.diagnoses);
  put("PROCEDURES_ICD", t.procedures);
  put("PRESCRIPTIONS", t.prescriptions);
}

// Tables for disease progression: patient p (subject 500 + p) has 1 + p % 4 admissions, a year
// apart, admission k at 2150 + k. Each admission has a chronic diagnosis 250<p % 3> (category
// 250, in every admission of the patient), an acute one 4<a> (a = 0 on the first admission, then
// the previous admission's procedure number + 1) and procedure 99<(p + k) % 3>; one drug, NACL.
// So the next admission's diagnoses are the chronic one (the history) and one the current
// procedure implies.
inline Tables make_progression_tables(int patients) {
  Tables t;
  t.admissions = "\"ROW_ID\",\"SUBJECT_ID\",\"HADM_ID\",\"ADMITTIME\"\n";
  t.diagnoses = "\"ROW_ID\",\"SUBJECT_ID\",\"HADM_ID\",\"SEQ_NUM\",\"ICD9_CODE\"\n";
  t.procedures = t.diagnoses;
  t.prescriptions =
      "\"ROW_ID\",\"SUBJECT_ID\",\"HADM_ID\",\"DRUG\",\"FORMULARY_DRUG_CD\",\"ROUTE\"\n";
  int row = 1;
  for (int p = 0; p < patients; ++p) {
    const std::string subject = std::to_string(500 + p);
    int acute = 0;
    for (int k = 0; k < 1 + p % 4; ++k) {
      const std::string hadm = std::to_string(5000 + 10 * p + k), lead = subject + "," + hadm;
      const int proc = (p + k) % 3;
      t.admissions +=
          std::to_string(row++) + "," + lead + "," + std::to_string(2150 + k) + "-03-01 08:00:00\n";
      t.diagnoses +=
          std::to_string(row++) + "," + lead + ",1,\"250" + std::to_string(p % 3) + "\"\n";
      t.diagnoses += std::to_string(row++) + "," + lead + ",2,\"4" + std::to_string(acute) + "\"\n";
      t.procedures +=
          std::to_string(row++) + "," + lead + ",1,\"99" + std::to_string(proc) + "\"\n";
      t.prescriptions += std::to_string(row++) + "," + lead + ",\"NaCl\",\"NACL\",\"IV\"\n";
      acute = proc + 1;
    }
  }
  return t;
}

}  // namespace memgrad::test::mimic_fixture
