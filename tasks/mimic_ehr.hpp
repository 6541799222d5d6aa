// Electronic health records from MIMIC-III or MIMIC-IV, as distributed (CSV tables, plain or
// .csv.gz, read by tasks/csv_stream.hpp): patients, their admissions in time order, and per
// admission the diagnosis codes in SEQ_NUM order (priority), the procedure codes in SEQ_NUM order
// (order performed) and the set of drugs prescribed. The tasks of the DMNC paper (section 4.2-4.3;
// tasks/mimic_drugs_task.cpp) are built on it; docs/mimic.md has the choices and the counts.
//
// Layouts (found from `data_dir`):
//   MIMIC-III  DIR/ADMISSIONS, DIAGNOSES_ICD, PROCEDURES_ICD, PRESCRIPTIONS (.csv or .csv.gz);
//              codes in ICD9_CODE, tokens are the codes as written ("4019").
//   MIMIC-IV   DIR/hosp/admissions, diagnoses_icd, procedures_icd, prescriptions; ICD-9 and
//              ICD-10 mixed, told apart by icd_version (9 or 10): tokens "9:4019", "10:I10".
// Drugs: the FORMULARY_DRUG_CD column (the paper's Table 4 shows formulary codes, DOCU100L, ASA81),
// or another column of PRESCRIPTIONS by `drug_column` (e.g. DRUG, the name).
//
// Streaming: each table is read once, row by row; only the kept fields of kept rows are held (an
// admission's code ids and SEQ_NUMs, its distinct drug ids), never a table.
//
// Rows MIMIC really has, handled and counted in Quirks (docs/mimic.md): a diagnosis or procedure
// row without a code (dropped) or without a SEQ_NUM (kept after the numbered codes, in file
// order); a code repeated within an admission (the first occurrence kept); a prescription without
// a drug code (dropped), without a route (kept); several prescriptions of one drug in an admission
// (one drug in the set). Bad input is an Error "file:line: column C: problem": a missing table
// or column, an id that is not a whole number, an admission id in another table that ADMISSIONS
// lacks (or that belongs to another patient there), a malformed time, an unknown ICD version,
// a malformed CSV row.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace memgrad::mimic {

enum class Layout { mimic3, mimic4 };

struct Admission {
  int64_t subject = 0, hadm = 0;
  int64_t admit_time = 0;      // seconds from 1970-01-01 of the (shifted) ADMITTIME
  std::vector<int32_t> dx;     // diagnosis code ids (Ehr::dx_codes), SEQ_NUM order
  std::vector<int32_t> proc;   // procedure code ids (Ehr::proc_codes), SEQ_NUM order
  std::vector<int32_t> drugs;  // distinct drug ids (Ehr::drug_codes), ascending
};

struct Patient {
  int64_t subject = 0;
  std::vector<int32_t> admissions;  // indices into Ehr::admissions, by admission time
};

struct Quirks {
  int64_t dx_rows = 0, proc_rows = 0, drug_rows = 0;           // data rows read
  int64_t dx_no_code = 0, proc_no_code = 0, drug_no_code = 0;  // dropped
  int64_t dx_no_seq = 0, proc_no_seq = 0;                      // kept, after the numbered ones
  int64_t dx_repeated = 0, proc_repeated = 0;                  // repeats dropped
  int64_t drug_repeated = 0;                                   // rows of a drug already in the set
  int64_t drug_no_route = 0;                                   // kept
  int64_t drug_no_admission = 0;                               // empty HADM_ID: dropped
  int64_t icd9 = 0, icd10 = 0;                                 // MIMIC-IV: rows per version
  std::string summary() const;                                 // one line for the run log
};

struct Ehr {
  Layout layout = Layout::mimic3;
  std::string data_dir;
  std::vector<std::string> dx_codes, proc_codes, drug_codes;  // id -> token
  std::vector<Admission> admissions;                          // in ADMISSIONS' file order
  std::vector<Patient> patients;  // by first admission time, then subject id
  Quirks quirks;
  double seconds = 0;  // time to read the tables
};

struct LoadOptions {
  std::string data_dir = "../shared/data/mimic-iii-demo";
  std::string drug_column = "formulary_drug_cd";
};

// The layout of `data_dir`; an Error naming what was looked for when it is neither.
Layout detect_layout(const std::string& data_dir);

// The path of table `name` (MIMIC-III spelling, e.g. "DIAGNOSES_ICD") in the layout: .csv if it
// exists, else .csv.gz; an Error "DIR: missing table NAME (no ... or ...)" when neither does.
std::string table_path(const std::string& data_dir, Layout layout, const std::string& name);

// Reads the four tables. Throws an Error as the header says.
Ehr load(const LoadOptions& options);

// The titles of the codes of a dictionary table ("D_ICD_DIAGNOSES" or "D_ICD_PROCEDURES", MIMIC-III
// spelling) keyed by token as load() writes it ("4019"; MIMIC-IV "9:4019"): MIMIC-III's
// SHORT_TITLE, MIMIC-IV's long_title. Empty when the table is absent (titles are optional, for
// reading); an Error for a malformed one.
std::unordered_map<std::string, std::string> read_titles(const std::string& data_dir, Layout layout,
                                                         const std::string& table);

// The names of drug codes, for reading (the paper's Table 4 writes "Docusate Sodium (DOCU100L)"):
// for each code of `codes` as PRESCRIPTIONS' column `code_column` writes it (FORMULARY_DRUG_CD),
// the value of column `name_column` (DRUG) on most of its rows (ties: the first seen). A code
// without a named row is absent; only the codes asked for are counted, whatever the table's size.
// An Error for a missing table or column.
std::unordered_map<std::string, std::string> read_drug_names(const std::string& data_dir,
                                                             Layout layout,
                                                             const std::string& code_column,
                                                             const std::string& name_column,
                                                             const std::vector<std::string>& codes);

// "YYYY-MM-DD HH:MM:SS" (or "YYYY-MM-DD") as seconds from 1970-01-01 (proleptic Gregorian; the
// shifted MIMIC years 2100-2200 included); false when `text` is not such a time.
bool parse_time(const std::string& text, int64_t& seconds);

}  // namespace memgrad::mimic
