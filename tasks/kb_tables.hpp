// The tables that link ICD-10-CM codes to the Disease Ontology and name them, as distributed:
//   - ICD10inDO.tsv (DO reports): id, label, xrefs; one DOID per row, its ICD10CM codes in xrefs
//     ("ICD10CM:E88.9", several separated by '|' or ',');
//   - icd_cm_9_to_10_mapping.csv.gz (CMS GEM): icd_9, icd_10, flags;
//   - disease-symptom.tsv (DO reports): disease_id, disease_label, symptom_id, symptom_label.
// Codes are kept normalised: upper case without the dot (CodiEsp's "r50.9" is "R509").
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace memgrad {

// "r50.9" -> "R509".
std::string normalize_icd(std::string_view code);

struct DoIcdRow {
  std::string doid, label;
  std::vector<std::string> icd10;  // normalised
  int64_t line = 0;
};
// Throws "path:line: ..." for a wrong header, a row without 3 fields, an id that is not
// "DOID:<digits>", or an xref that is not "ICD10CM:<code>".
std::vector<DoIcdRow> read_icd10_in_do(const std::string& path);

// ICD-10 code -> the ICD-9 codes the GEM maps to it (rows flagged "no map", flags[1] == '1',
// skipped). Throws "path:line: ..." for a wrong header or a row without 3 fields.
std::map<std::string, std::vector<std::string>> read_gem_10_to_9(const std::string& path);

struct DiseaseSymptom {
  std::string doid, symptom;
  int64_t line = 0;
};
// Throws "path:line: ..." for a wrong header, a row without 4 fields or a malformed DOID.
std::vector<DiseaseSymptom> read_disease_symptoms(const std::string& path);

}  // namespace memgrad
