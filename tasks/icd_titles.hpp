// ICD-10-CM code titles for display (`memgrad inspect` on a CodiEsp note, label tables), read from
// CMS's order file as distributed in ../shared/data/icd-code-tables/icd10cm-order-Jan-2021.csv.gz:
// a CSV header "code,billable,short,long", then one row per code ("A000", upper case, no dot),
// fields that hold commas double-quoted.
#pragma once
#include <map>
#include <string>

namespace memgrad::icd {

struct Title {
  std::string short_title, long_title;
};

// Titles by code as CodiEsp writes codes: lower case, a dot after the 3-character category
// ("a00.0"). Reads a .csv or a .csv.gz. An Error names the file and line of a malformed row.
std::map<std::string, Title> read_icd10cm_titles(const std::string& path);

// "A000" -> "a00.0", "A00" -> "a00".
std::string dotted_lower(const std::string& code);

}  // namespace memgrad::icd
