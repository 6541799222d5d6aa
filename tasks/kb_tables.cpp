// ICD and DO report tables (see kb_tables.hpp).
#include "tasks/kb_tables.hpp"

#include <cctype>

#include "engine/error.hpp"
#include "engine/quote.hpp"
#include "tasks/kb_text.hpp"

namespace memgrad {
namespace {

// Calls row(line, fields) for every non-blank line after the header, which must be `header`.
template <class F>
void for_each_row(const std::string& path, char sep, const std::vector<std::string>& header,
                  size_t width, F&& row) {
  const std::string text = read_text_file(path);
  for_each_line(text, path, [&](int64_t line_no, std::string_view line) {
    if (line.empty()) return;
    std::vector<std::string> f = split_fields(line, sep, path, line_no);
    if (line_no == 1) {
      MG_CHECK(f == header, path, ":1: unexpected header ", quote(line), " (want the columns ",
               header.size(), ": ", header.front(), " ... ", header.back(), ")");
      return;
    }
    MG_CHECK(f.size() == width, path, ":", line_no, ": ", f.size(), " fields, want ", width, ": ",
             quote(line));
    row(line_no, f);
  });
}

bool is_doid(std::string_view s) {
  if (s.substr(0, 5) != "DOID:" || s.size() == 5) return false;
  for (const char c : s.substr(5))
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

std::string normalize_icd(std::string_view code) {
  std::string out;
  for (const char c : code)
    if (c != '.' && c != ' ') out += char(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::vector<DoIcdRow> read_icd10_in_do(const std::string& path) {
  std::vector<DoIcdRow> rows;
  for_each_row(
      path, '\t', {"id", "label", "xrefs"}, 3, [&](int64_t line, std::vector<std::string>& f) {
        MG_CHECK(is_doid(f[0]), path, ":", line, ": id ", quote(f[0]), " is not DOID:<digits>");
        DoIcdRow r{f[0], f[1], {}, line};
        std::string_view x = f[2];
        while (!x.empty()) {
          const size_t end = x.find_first_of("|,");
          std::string_view one = x.substr(0, end);
          while (!one.empty() && one.front() == ' ') one.remove_prefix(1);
          while (!one.empty() && one.back() == ' ') one.remove_suffix(1);
          MG_CHECK(one.substr(0, 8) == "ICD10CM:" && one.size() > 8, path, ":", line, ": xref ",
                   quote(one), " is not ICD10CM:<code>");
          r.icd10.push_back(normalize_icd(one.substr(8)));
          x = end == std::string_view::npos ? std::string_view{} : x.substr(end + 1);
        }
        MG_CHECK(!r.icd10.empty(), path, ":", line, ": no ICD10CM xref");
        rows.push_back(std::move(r));
      });
  return rows;
}

std::map<std::string, std::vector<std::string>> read_gem_10_to_9(const std::string& path) {
  std::map<std::string, std::vector<std::string>> gem;
  for_each_row(path, ',', {"icd_9", "icd_10", "flags"}, 3,
               [&](int64_t line, std::vector<std::string>& f) {
                 MG_CHECK(!f[0].empty() && !f[1].empty(), path, ":", line, ": empty code");
                 if (f[2].size() >= 2 && f[2][1] == '1') return;  // "no map"
                 gem[normalize_icd(f[1])].push_back(normalize_icd(f[0]));
               });
  return gem;
}

std::vector<DiseaseSymptom> read_disease_symptoms(const std::string& path) {
  std::vector<DiseaseSymptom> out;
  for_each_row(path, '\t', {"disease_id", "disease_label", "symptom_id", "symptom_label"}, 4,
               [&](int64_t line, std::vector<std::string>& f) {
                 MG_CHECK(is_doid(f[0]), path, ":", line, ": disease_id ", quote(f[0]),
                          " is not DOID:<digits>");
                 MG_CHECK(!f[3].empty(), path, ":", line, ": empty symptom_label");
                 out.push_back({f[0], f[3], line});
               });
  return out;
}

}  // namespace memgrad
