// PhysioNet 2012 record and outcome parsing (see physionet_record.hpp).
#include "tasks/physionet_record.hpp"

#include <charconv>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <sstream>

#include "engine/error.hpp"
#include "engine/quote.hpp"

namespace memgrad::physionet {

// Physiological ranges: a value outside [lo, hi] cannot be a real measurement in the challenge's
// units. Chosen wide (every plausible ICU value is inside) so that only entry and unit errors
// fall out; each bound that removes values in this data says which (counts: docs/physionet2012.md).
const std::array<Variable, kNumSeries> kSeries = {{
    {"ALP", "IU/L", 1, 10000},
    {"ALT", "IU/L", 1, 20000},
    {"AST", "IU/L", 1, 20000},
    {"Albumin", "g/dL", 0.5, 10},
    {"BUN", "mg/dL", 0, 300},
    {"Bilirubin", "mg/dL", 0, 100},
    {"Cholesterol", "mg/dL", 10, 1000},
    {"Creatinine", "mg/dL", 0.05, 40},
    {"DiasABP", "mmHg", 1, 300},  // 0: a flushed or disconnected arterial line
    {"FiO2", "fraction", 0.21, 1},
    {"GCS", "points", 3, 15},
    {"Glucose", "mg/dL", 1, 2000},
    {"HCO3", "mmol/L", 1, 60},
    {"HCT", "%", 1, 80},
    {"HR", "bpm", 1, 300},    // 0: no signal
    {"K", "mEq/L", 0.5, 15},  // 22.9 occurs
    {"Lactate", "mmol/L", 0.1, 40},
    {"MAP", "mmHg", 1, 300},
    {"MechVent", "0/1", 0, 1},
    {"Mg", "mmol/L", 0.1, 15},  // 0 and 21 occur
    {"NIDiasABP", "mmHg", 1, 300},
    {"NIMAP", "mmHg", 1, 300},
    {"NISysABP", "mmHg", 1, 300},
    {"Na", "mEq/L", 90, 200},
    {"PaCO2", "mmHg", 1, 200},
    {"PaO2", "mmHg", 1, 800},
    {"Platelets", "cells/nL", 1, 3000},
    {"RespRate", "bpm", 0, 100},  // 0 kept: apnoea / fully ventilated
    {"SaO2", "%", 20, 100},       // 1.06 occurs
    {"SysABP", "mmHg", 1, 300},
    {"Temp", "°C", 25, 45},  // -17.8, 0, 0.4-3.6, 18.6-24.2 occur
    {"TroponinI", "μg/L", 0, 100},
    {"TroponinT", "μg/L", 0, 100},
    {"Urine", "mL", 0, 20000},
    {"WBC", "cells/nL", 0, 500},  // 12,500 occurs (cells/μL)
    {"pH", "", 6.5, 8.0},         // 0-3, 94-187 and 733-735 (x100) occur
    {"Weight", "kg", 25, 300},    // 0, 0.6, 3.4, 5 and 21.7 occur in the series
}};

const std::array<Variable, kNumDescriptors> kDescriptors = {{
    {"Age", "years", 0, 120},
    {"Gender", "0 female, 1 male", 0, 1},
    {"Height", "cm", 100, 250},  // 1.8-17.8 and 366-462 occur
    {"ICUType", "1-4", 1, 4},
    {"Weight", "kg", 25, 300},
}};

int series_index(std::string_view name) {
  for (int i = 0; i < kNumSeries; ++i)
    if (name == kSeries[size_t(i)].name) return i;
  return -1;
}

namespace {

int descriptor_index(std::string_view name) {
  for (int i = 0; i < kNumDescriptors; ++i)
    if (name == kDescriptors[size_t(i)].name) return i;
  return -1;
}

// "HH:MM" (one or more hour digits, two minute digits 00-59) -> minutes; -1 when malformed.
int64_t parse_time(std::string_view t) {
  const size_t colon = t.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 4 || t.size() != colon + 3)
    return -1;
  int64_t h = 0, m = 0;
  for (size_t i = 0; i < colon; ++i) {
    if (t[i] < '0' || t[i] > '9') return -1;
    h = h * 10 + (t[i] - '0');
  }
  for (size_t i = colon + 1; i < t.size(); ++i) {
    if (t[i] < '0' || t[i] > '9') return -1;
    m = m * 10 + (t[i] - '0');
  }
  return m < 60 ? h * 60 + m : -1;
}

bool parse_number(std::string_view s, double& v) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size() && std::isfinite(v);
}

// A RecordID: a whole number in [1, 2^53] (the doubles that hold every integer exactly). Checked
// before the conversion to int64, which is undefined behaviour for 1e61 (found by
// tests/fuzz/fuzz_physionet_record).
bool record_id(double v, int64_t& id) {
  if (!(v >= 1 && v <= 9007199254740992.0) || v != std::floor(v)) return false;
  id = int64_t(v);
  return true;
}

// Splits `text` into lines (without '\n' and a trailing '\r'); calls fn(line, 1-based number).
template <class Fn>
void for_each_line(std::string_view text, Fn&& fn) {
  int64_t line_no = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    fn(line, ++line_no);
    start = end + 1;
  }
}

// Splits a CSV line into fields (no quoting in these files).
void split_fields(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    out.push_back(line.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
}

}  // namespace

Quirks& Quirks::operator+=(const Quirks& o) {
  records += o.records;
  rows += o.rows;
  for (int v = 0; v < kNumSeries; ++v) {
    missing_marker[size_t(v)] += o.missing_marker[size_t(v)];
    out_of_range[size_t(v)] += o.out_of_range[size_t(v)];
    never_observed[size_t(v)] += o.never_observed[size_t(v)];
  }
  for (int d = 0; d < kNumDescriptors; ++d) {
    descriptor_missing[size_t(d)] += o.descriptor_missing[size_t(d)];
    descriptor_out_of_range[size_t(d)] += o.descriptor_out_of_range[size_t(d)];
  }
  duplicate_times += o.duplicate_times;
  records_without_series += o.records_without_series;
  beyond_window += o.beyond_window;
  return *this;
}

std::string Quirks::summary() const {
  std::ostringstream out;
  out << records << " records, " << rows << " observation rows\n";
  auto per_variable = [&](const char* what, const auto& counts, const auto& table) {
    std::string parts;
    for (size_t i = 0; i < counts.size(); ++i)
      if (counts[i] > 0)
        parts += (parts.empty() ? "" : ", ") + std::string(table[i].name) + " " +
                 std::to_string(counts[i]);
    if (!parts.empty()) out << "  " << what << ": " << parts << "\n";
  };
  per_variable("series values -1 (missing marker), dropped", missing_marker, kSeries);
  per_variable("series values outside the physiological range, dropped", out_of_range, kSeries);
  per_variable("descriptors missing (-1 or no line)", descriptor_missing, kDescriptors);
  per_variable("descriptors outside their range, made missing", descriptor_out_of_range,
               kDescriptors);
  per_variable("records never observing the variable", never_observed, kSeries);
  if (duplicate_times > 0)
    out << "  values of a variable at a minute that already has one (the last is binned): "
        << duplicate_times << "\n";
  if (records_without_series > 0)
    out << "  records without any series value: " << records_without_series << "\n";
  if (beyond_window > 0)
    out << "  observations after the binning window, dropped: " << beyond_window << "\n";
  return out.str();
}

Record parse_record(std::string_view text, const std::string& source, int64_t expected_id,
                    Quirks& quirks) {
  Record rec;
  rec.source = source;
  rec.descriptor.fill(NAN);
  std::array<bool, kNumDescriptors> seen_descriptor{}, out_of_range{};
  bool seen_id = false;
  std::vector<std::string_view> f;
  std::array<int64_t, kNumSeries> last_minute;  // of the variable's latest valid value
  last_minute.fill(-1);
  std::array<bool, kNumSeries> observed{};
  bool header = false;
  for_each_line(text, [&](std::string_view line, int64_t line_no) {
    auto bad = [&](const auto&... parts) { fail(source, ":", line_no, ": ", parts...); };
    if (!header) {
      if (line != "Time,Parameter,Value")
        bad("expected the header 'Time,Parameter,Value', got ", quote(line),
            " (not a PhysioNet 2012 record)");
      header = true;
      return;
    }
    if (line.empty()) return;
    split_fields(line, f);
    if (f.size() != 3)
      bad("expected 3 comma-separated fields (Time,Parameter,Value), got ", f.size(), ": ",
          quote(line));
    ++quirks.rows;
    const int64_t minute = parse_time(f[0]);
    if (minute < 0) bad("malformed time ", quote(f[0]), " (expected HH:MM, minutes 00-59)");
    if (minute > INT16_MAX) bad("time ", quote(f[0]), " is beyond ", INT16_MAX / 60, " hours");
    double value = 0;
    if (!parse_number(f[2], value))
      bad("value ", quote(f[2]), " of ", show(f[1]), " is not a finite number");
    const std::string_view param = f[1];
    if (param == "RecordID") {
      if (minute != 0) bad("RecordID at ", show(f[0]), " (descriptors are at 00:00)");
      if (seen_id) bad("a second RecordID");
      if (!record_id(value, rec.id))
        bad("RecordID ", quote(f[2]), " is not a positive whole number");
      if (expected_id > 0 && rec.id != expected_id)
        bad("RecordID ", rec.id, " does not match the file name (", expected_id, ")");
      seen_id = true;
      return;
    }
    int d = descriptor_index(param);
    // The first Weight line at 00:00 is the descriptor; every other Weight line is the series.
    if (d == kWeightDescriptor && (minute != 0 || seen_descriptor[size_t(d)])) d = -1;
    if (d >= 0) {
      if (minute != 0) bad(param, " at ", show(f[0]), " (descriptors are at 00:00)");
      if (seen_descriptor[size_t(d)]) bad("a second ", param, " descriptor");
      seen_descriptor[size_t(d)] = true;
      const Variable& v = kDescriptors[size_t(d)];
      const bool coded = d == kGender || d == kIcuType;  // must be one of the codes
      if (value == -1) return;                           // missing; counted below
      if (value < v.lo || value > v.hi || (coded && value != std::floor(value))) {
        ++quirks.descriptor_out_of_range[size_t(d)];
        out_of_range[size_t(d)] = true;
        return;
      }
      rec.descriptor[size_t(d)] = value;
      return;
    }
    const int s = series_index(param);
    if (s < 0) bad("unknown parameter ", quote(param));
    if (value == -1) {
      ++quirks.missing_marker[size_t(s)];
      return;
    }
    const Variable& v = kSeries[size_t(s)];
    if (value < v.lo || value > v.hi) {
      ++quirks.out_of_range[size_t(s)];
      return;
    }
    if (last_minute[size_t(s)] == minute) ++quirks.duplicate_times;
    last_minute[size_t(s)] = minute;
    observed[size_t(s)] = true;
    rec.observations.push_back({int16_t(minute), int16_t(s), float(value)});
  });
  MG_CHECK(header, source, ": empty file (expected the header 'Time,Parameter,Value')");
  MG_CHECK(seen_id, source, ": no RecordID line (every record starts with its descriptors)");
  ++quirks.records;
  for (int d = 0; d < kNumDescriptors; ++d)
    if (std::isnan(rec.descriptor[size_t(d)]) && !out_of_range[size_t(d)])
      ++quirks.descriptor_missing[size_t(d)];
  for (int s = 0; s < kNumSeries; ++s)
    if (!observed[size_t(s)]) ++quirks.never_observed[size_t(s)];
  if (rec.observations.empty()) ++quirks.records_without_series;
  return rec;
}

std::map<int64_t, Outcome> read_outcomes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  MG_CHECK(in.good(), path, ": cannot open (missing or unreadable outcome file)");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::map<int64_t, Outcome> out;
  std::vector<std::string_view> f;
  int col_id = -1, col_death = -1, col_saps = -1, col_sofa = -1, col_los = -1, col_surv = -1;
  size_t columns = 0;
  for_each_line(text, [&](std::string_view line, int64_t line_no) {
    auto bad = [&](const auto&... parts) { fail(path, ":", line_no, ": ", parts...); };
    if (line.empty()) return;
    split_fields(line, f);
    if (columns == 0) {
      columns = f.size();
      for (size_t i = 0; i < f.size(); ++i) {
        int* col = f[i] == "RecordID"            ? &col_id
                   : f[i] == "In-hospital_death" ? &col_death
                   : f[i] == "SAPS-I"            ? &col_saps
                   : f[i] == "SOFA"              ? &col_sofa
                   : f[i] == "Length_of_stay"    ? &col_los
                   : f[i] == "Survival"          ? &col_surv
                                                 : nullptr;
        if (col) *col = int(i);
      }
      if (col_id < 0 || col_death < 0)
        bad("the header ", quote(line),
            " lacks RecordID or In-hospital_death (not a PhysioNet 2012 outcome file)");
      return;
    }
    if (f.size() != columns) bad("expected ", columns, " fields, got ", f.size());
    std::vector<double> v(f.size());
    for (size_t i = 0; i < f.size(); ++i)
      if (!parse_number(f[i], v[i])) bad("field ", i + 1, " ", quote(f[i]), " is not a number");
    Outcome o;
    if (!record_id(v[size_t(col_id)], o.id))
      bad("RecordID ", quote(f[size_t(col_id)]), " is not a positive whole number");
    const double death = v[size_t(col_death)];
    if (death != 0 && death != 1) bad("In-hospital_death must be 0 or 1, got ", death);
    o.death = int(death);
    auto opt = [&](int col) { return col < 0 || v[size_t(col)] == -1 ? NAN : v[size_t(col)]; };
    o.saps_i = opt(col_saps);
    o.sofa = opt(col_sofa);
    o.length_of_stay = opt(col_los);
    o.survival = opt(col_surv);
    if (!out.emplace(o.id, o).second) bad("RecordID ", o.id, " is listed twice");
  });
  MG_CHECK(columns > 0, path, ": empty outcome file");
  return out;
}

}  // namespace memgrad::physionet
