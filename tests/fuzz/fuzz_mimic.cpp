// libFuzzer target: the MIMIC tables (tasks/csv_stream.hpp, tasks/mimic_ehr.hpp). Each input is
// read as a CSV file to its end (plain, and gzip-compressed when it starts with gzip's magic
// bytes: zlib reads both) and, written in place of one of the four MIMIC-III tables (the input's
// length mod 4 says which; the other three are small valid tables), loaded as a data set. Bad
// input must be a memgrad::Error.
#include "engine/error.hpp"
#include "tasks/csv_stream.hpp"
#include "tasks/mimic_ehr.hpp"
#include "tests/fuzz/fuzz_util.hpp"

using namespace memgrad;

namespace {
constexpr const char* kTables[4][2] = {
    {"ADMISSIONS.csv",
     "\"ROW_ID\",\"SUBJECT_ID\",\"HADM_ID\",\"ADMITTIME\"\n1,10,100,2150-01-01 10:00:00\n"
     "2,10,101,2151-02-03 04:05:06\n3,11,110,2149-12-31 23:59:59\n"},
    {"DIAGNOSES_ICD.csv",
     "\"ROW_ID\",\"SUBJECT_ID\",\"HADM_ID\",\"SEQ_NUM\",\"ICD9_CODE\"\n1,10,100,2,\"4019\"\n"
     "2,10,100,1,\"V101\"\n3,11,110,,\"4019\"\n"},
    {"PROCEDURES_ICD.csv",
     "\"ROW_ID\",\"SUBJECT_ID\",\"HADM_ID\",\"SEQ_NUM\",\"ICD9_CODE\"\n1,10,100,1,\"3893\"\n"},
    {"PRESCRIPTIONS.csv",
     "\"ROW_ID\",\"SUBJECT_ID\",\"HADM_ID\",\"DRUG\",\"FORMULARY_DRUG_CD\",\"ROUTE\"\n"
     "1,10,100,\"Aspirin\",\"ASA81\",\"PO\"\n2,11,110,\"NaCl, 0.9%\",\"NACL\",\n"}};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  try {
    CsvReader csv(fuzz::write_file("table.csv", text));
    while (csv.next()) (void)csv.field(0);
  } catch (const Error&) {
  }
  const size_t which = size % 4;
  for (size_t t = 0; t < 4; ++t)
    fuzz::write_file(std::string("mimic/") + kTables[t][0], t == which ? text : kTables[t][1]);
  try {
    const mimic::Ehr e = mimic::load({.data_dir = (fuzz::scratch_dir() / "mimic").string()});
    (void)e.quirks.summary();
  } catch (const Error&) {
  }
  return 0;
}
