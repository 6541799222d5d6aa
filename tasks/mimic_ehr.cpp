// MIMIC-III / MIMIC-IV records (see mimic_ehr.hpp).
#include "tasks/mimic_ehr.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <climits>
#include <filesystem>
#include <sstream>
#include <unordered_map>

#include "engine/error.hpp"
#include "engine/quote.hpp"
#include "tasks/csv_stream.hpp"

namespace memgrad::mimic {
namespace {

namespace fs = std::filesystem;

// Whole number in `text` (no sign, spaces or fraction); false otherwise.
bool parse_id(const std::string& text, int64_t& out) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && out >= 0;
}

int64_t id_field(const CsvReader& csv, size_t column) {
  int64_t v = 0;
  if (!parse_id(csv.field(column), v))
    csv.fail_at(column, "not a whole number: " + quote(csv.field(column)));
  return v;
}

// Interned code tokens: token -> id, ids in order of first appearance.
struct Codes {
  std::vector<std::string>* names;
  std::unordered_map<std::string, int32_t> ids;
  int32_t intern(const std::string& token) {
    auto [it, added] = ids.try_emplace(token, int32_t(names->size()));
    if (added) names->push_back(token);
    return it->second;
  }
};

// The lower-case MIMIC-IV name of a MIMIC-III table.
std::string mimic4_name(const std::string& name) {
  std::string s = name;
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

struct Index {
  std::unordered_map<int64_t, int32_t> of_hadm;  // HADM_ID -> admission index
  // The admission of a row's HADM_ID column; an Error when ADMISSIONS lacks it or gives it to
  // another patient.
  int32_t admission(const CsvReader& csv, size_t hadm_col, size_t subject_col,
                    const std::vector<Admission>& admissions) const {
    const int64_t hadm = id_field(csv, hadm_col);
    const auto it = of_hadm.find(hadm);
    if (it == of_hadm.end())
      csv.fail_at(hadm_col, "admission " + std::to_string(hadm) + " is not in ADMISSIONS");
    const int64_t subject = id_field(csv, subject_col);
    if (admissions[size_t(it->second)].subject != subject)
      csv.fail_at(subject_col, "admission " + std::to_string(hadm) + " belongs to patient " +
                                   std::to_string(admissions[size_t(it->second)].subject) +
                                   " in ADMISSIONS, not " + std::to_string(subject));
    return it->second;
  }
};

void read_admissions(const std::string& path, Ehr& ehr, Index& index) {
  CsvReader csv(path);
  const size_t subject = csv.column("subject_id"), hadm = csv.column("hadm_id"),
               admit = csv.column("admittime");
  while (csv.next()) {
    Admission a;
    a.subject = id_field(csv, subject);
    a.hadm = id_field(csv, hadm);
    if (!parse_time(csv.field(admit), a.admit_time))
      csv.fail_at(admit, "not a time (YYYY-MM-DD HH:MM:SS): " + quote(csv.field(admit)));
    const auto [it, added] = index.of_hadm.try_emplace(a.hadm, int32_t(ehr.admissions.size()));
    if (!added) csv.fail_at(hadm, "admission " + std::to_string(a.hadm) + " listed twice");
    ehr.admissions.push_back(std::move(a));
  }
}

// A code table (DIAGNOSES_ICD or PROCEDURES_ICD) into each admission's `field`, in SEQ_NUM order.
struct CodeCounts {
  int64_t *rows, *no_code, *no_seq, *repeated;
};
void read_codes(const std::string& path, Ehr& ehr, const Index& index, Codes& codes,
                std::vector<int32_t> Admission::*field, CodeCounts counts) {
  CsvReader csv(path);
  const bool iv = ehr.layout == Layout::mimic4;
  const size_t subject = csv.column("subject_id"), hadm = csv.column("hadm_id"),
               seq = csv.column("seq_num"), code = csv.column(iv ? "icd_code" : "icd9_code");
  const size_t version = iv ? csv.column("icd_version") : 0;
  // Per admission: (SEQ_NUM, code id) as read; SEQ_NUM INT_MAX when empty.
  std::vector<std::vector<std::pair<int32_t, int32_t>>> rows(ehr.admissions.size());
  std::string token;
  while (csv.next()) {
    ++*counts.rows;
    const int32_t a = index.admission(csv, hadm, subject, ehr.admissions);
    token.clear();
    if (iv) {
      const std::string& v = csv.field(version);
      if (v == "9")
        ++ehr.quirks.icd9;
      else if (v == "10")
        ++ehr.quirks.icd10;
      else
        csv.fail_at(version, "unknown ICD version " + quote(v) + " (9 or 10)");
      token = v + ":";
    }
    if (csv.field(code).empty()) {
      ++*counts.no_code;
      continue;
    }
    token += csv.field(code);
    int32_t s = INT32_MAX;
    if (csv.field(seq).empty()) {
      ++*counts.no_seq;
    } else {
      int64_t v = 0;
      if (!parse_id(csv.field(seq), v) || v >= INT32_MAX)
        csv.fail_at(seq, "not a whole number: " + quote(csv.field(seq)));
      s = int32_t(v);
    }
    rows[size_t(a)].emplace_back(s, codes.intern(token));
  }
  for (size_t a = 0; a < rows.size(); ++a) {
    auto& r = rows[a];
    std::stable_sort(r.begin(), r.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<int32_t>& out = ehr.admissions[a].*field;
    for (const auto& [s, c] : r) {
      if (std::find(out.begin(), out.end(), c) != out.end()) {
        ++*counts.repeated;
        continue;
      }
      out.push_back(c);
    }
    std::vector<std::pair<int32_t, int32_t>>().swap(r);
  }
}

void read_prescriptions(const std::string& path, const std::string& drug_column, Ehr& ehr,
                        const Index& index) {
  CsvReader csv(path);
  const size_t subject = csv.column("subject_id"), hadm = csv.column("hadm_id"),
               drug = csv.column(drug_column), route = csv.column("route");
  Codes drugs{&ehr.drug_codes, {}};
  Quirks& q = ehr.quirks;
  while (csv.next()) {
    ++q.drug_rows;
    if (csv.field(hadm).empty()) {
      ++q.drug_no_admission;
      continue;
    }
    const int32_t a = index.admission(csv, hadm, subject, ehr.admissions);
    if (csv.field(route).empty()) ++q.drug_no_route;
    if (csv.field(drug).empty()) {
      ++q.drug_no_code;
      continue;
    }
    std::vector<int32_t>& set = ehr.admissions[size_t(a)].drugs;
    const int32_t id = drugs.intern(csv.field(drug));
    if (std::find(set.begin(), set.end(), id) != set.end()) {
      ++q.drug_repeated;
      continue;
    }
    set.push_back(id);
  }
  for (Admission& a : ehr.admissions) std::sort(a.drugs.begin(), a.drugs.end());
}

void order_patients(Ehr& ehr) {
  std::unordered_map<int64_t, int32_t> of_subject;
  for (int32_t i = 0; i < int32_t(ehr.admissions.size()); ++i) {
    const auto [it, added] =
        of_subject.try_emplace(ehr.admissions[size_t(i)].subject, int32_t(ehr.patients.size()));
    if (added) ehr.patients.push_back({ehr.admissions[size_t(i)].subject, {}});
    ehr.patients[size_t(it->second)].admissions.push_back(i);
  }
  auto earlier = [&](int32_t x, int32_t y) {
    const Admission &a = ehr.admissions[size_t(x)], &b = ehr.admissions[size_t(y)];
    return a.admit_time != b.admit_time ? a.admit_time < b.admit_time : a.hadm < b.hadm;
  };
  for (Patient& p : ehr.patients) std::sort(p.admissions.begin(), p.admissions.end(), earlier);
  std::sort(ehr.patients.begin(), ehr.patients.end(), [&](const Patient& p, const Patient& q) {
    const int64_t a = ehr.admissions[size_t(p.admissions[0])].admit_time,
                  b = ehr.admissions[size_t(q.admissions[0])].admit_time;
    return a != b ? a < b : p.subject < q.subject;
  });
}

}  // namespace

std::string Quirks::summary() const {
  std::ostringstream out;
  out << "diagnoses " << dx_rows << " rows (" << dx_no_code << " without a code dropped, "
      << dx_no_seq << " without SEQ_NUM put last, " << dx_repeated << " repeated codes dropped); "
      << "procedures " << proc_rows << " rows (" << proc_no_code << " without a code, "
      << proc_no_seq << " without SEQ_NUM, " << proc_repeated << " repeated); prescriptions "
      << drug_rows << " rows (" << drug_no_code << " without a drug code dropped, "
      << drug_no_admission << " without an admission dropped, " << drug_no_route
      << " without a route kept, " << drug_repeated << " repeats of a drug in its admission)";
  if (icd9 + icd10 > 0) out << "; ICD-9 rows " << icd9 << ", ICD-10 rows " << icd10;
  out << "\n";
  return out.str();
}

bool parse_time(const std::string& text, int64_t& seconds) {
  // YYYY-MM-DD[ HH:MM:SS]
  auto digits = [&](size_t at, size_t n, int& v) {
    if (at + n > text.size()) return false;
    v = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
      v = v * 10 + (text[i] - '0');
    }
    return true;
  };
  int y = 0, m = 0, d = 0, hh = 0, mm = 0, ss = 0;
  if (text.size() != 10 && text.size() != 19) return false;
  if (!digits(0, 4, y) || text[4] != '-' || !digits(5, 2, m) || text[7] != '-' || !digits(8, 2, d))
    return false;
  if (text.size() == 19 && (text[10] != ' ' || !digits(11, 2, hh) || text[13] != ':' ||
                            !digits(14, 2, mm) || text[16] != ':' || !digits(17, 2, ss)))
    return false;
  const std::chrono::year_month_day ymd{std::chrono::year(y), std::chrono::month(unsigned(m)),
                                        std::chrono::day(unsigned(d))};
  if (!ymd.ok() || hh > 23 || mm > 59 || ss > 60) return false;
  const int64_t days = std::chrono::sys_days(ymd).time_since_epoch().count();
  seconds = days * 86400 + hh * 3600 + mm * 60 + ss;
  return true;
}

Layout detect_layout(const std::string& dir) {
  std::error_code ec;
  for (const char* ext : {".csv", ".csv.gz"}) {
    if (fs::exists(fs::path(dir) / (std::string("ADMISSIONS") + ext), ec)) return Layout::mimic3;
    if (fs::exists(fs::path(dir) / "hosp" / (std::string("admissions") + ext), ec))
      return Layout::mimic4;
  }
  MG_CHECK(fs::is_directory(dir, ec), dir, ": no such folder (the MIMIC tables' folder)");
  fail(dir, ": neither MIMIC-III (ADMISSIONS.csv[.gz]) nor MIMIC-IV (hosp/admissions.csv[.gz]) ",
       "tables here");
}

std::string table_path(const std::string& dir, Layout layout, const std::string& name) {
  const fs::path base =
      layout == Layout::mimic3 ? fs::path(dir) / name : fs::path(dir) / "hosp" / mimic4_name(name);
  std::error_code ec;
  for (const char* ext : {".csv", ".csv.gz"}) {
    const std::string p = base.string() + ext;
    if (fs::exists(p, ec)) return p;
  }
  fail(dir, ": missing table ", name, " (no ", base.string(), ".csv or .csv.gz)");
}

std::unordered_map<std::string, std::string> read_titles(const std::string& dir, Layout layout,
                                                         const std::string& table) {
  std::unordered_map<std::string, std::string> titles;
  std::string path;
  try {
    path = table_path(dir, layout, table);
  } catch (const Error&) {
    return titles;  // no dictionary: codes stay bare
  }
  CsvReader csv(path);
  const bool iv = layout == Layout::mimic4;
  const size_t code = csv.column(iv ? "icd_code" : "icd9_code"),
               title = csv.column(iv ? "long_title" : "short_title");
  const size_t version = iv ? csv.column("icd_version") : 0;
  while (csv.next())
    titles[iv ? csv.field(version) + ":" + csv.field(code) : csv.field(code)] = csv.field(title);
  return titles;
}

std::unordered_map<std::string, std::string> read_drug_names(
    const std::string& data_dir, Layout layout, const std::string& code_column,
    const std::string& name_column, const std::vector<std::string>& codes) {
  // Per code, its names with their row counts in order of first appearance.
  std::unordered_map<std::string, std::vector<std::pair<std::string, int64_t>>> counts;
  for (const std::string& c : codes) counts[c];
  CsvReader csv(table_path(data_dir, layout, "PRESCRIPTIONS"));
  const size_t code = csv.column(code_column), name = csv.column(name_column);
  while (csv.next()) {
    const auto it = counts.find(csv.field(code));
    if (it == counts.end() || csv.field(name).empty()) continue;
    auto& names = it->second;
    auto seen = std::find_if(names.begin(), names.end(),
                             [&](const auto& n) { return n.first == csv.field(name); });
    if (seen == names.end())
      names.emplace_back(csv.field(name), 1);
    else
      ++seen->second;
  }
  std::unordered_map<std::string, std::string> out;
  for (const auto& [c, names] : counts) {
    const auto most =
        std::max_element(names.begin(), names.end(), [](const auto& a, const auto& b) {
          return a.second < b.second;  // the first of equal counts wins
        });
    if (most != names.end()) out[c] = most->first;
  }
  return out;
}

Ehr load(const LoadOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  Ehr ehr;
  ehr.data_dir = o.data_dir;
  ehr.layout = detect_layout(o.data_dir);
  // Every table's path first: a missing one is reported before minutes of reading.
  std::string paths[4];
  const char* names[4] = {"ADMISSIONS", "DIAGNOSES_ICD", "PROCEDURES_ICD", "PRESCRIPTIONS"};
  for (int i = 0; i < 4; ++i) paths[i] = table_path(o.data_dir, ehr.layout, names[i]);
  Index index;
  read_admissions(paths[0], ehr, index);
  Codes dx{&ehr.dx_codes, {}}, proc{&ehr.proc_codes, {}};
  Quirks& q = ehr.quirks;
  read_codes(paths[1], ehr, index, dx, &Admission::dx,
             {&q.dx_rows, &q.dx_no_code, &q.dx_no_seq, &q.dx_repeated});
  read_codes(paths[2], ehr, index, proc, &Admission::proc,
             {&q.proc_rows, &q.proc_no_code, &q.proc_no_seq, &q.proc_repeated});
  read_prescriptions(paths[3], o.drug_column, ehr, index);
  order_patients(ehr);
  ehr.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return ehr;
}

}  // namespace memgrad::mimic
