// The PhysioNet/CinC Challenge 2012 record and outcome formats, as distributed
// (../shared/data/physionet-challenge-2012/SOURCE.md; Silva et al., CinC 2012).
//
// A record (set-a/<RecordID>.txt): CSV with the header "Time,Parameter,Value", one observation per
// line. Time is "HH:MM" since ICU admission (00:00 to 48:00). Six general descriptors come at
// 00:00: RecordID, Age, Gender (0 female, 1 male), Height (cm), ICUType (1 coronary care, 2
// cardiac surgery recovery, 3 medical, 4 surgical) and Weight (kg). The other lines are the 36
// time series, and Weight again as a series: the first Weight line at 00:00 is the descriptor,
// every later one a series observation. A value of -1 means missing.
//
// What the parser does with the data's real quirks (each counted in Quirks, none an error):
//   - a value of exactly -1 (the challenge's missing marker) is not an observation;
//   - a series value outside the variable's physiological range (kSeries: lo, hi) is impossible
//     (a unit or entry error: pH 735, Temp -17.8 °C, HR 0, Weight 0 kg) and is dropped as if
//     missing. Dropped, not clipped: clipping pH 735 to 8.0 would invent an extreme measurement.
//     Descriptors outside their range (Height 1.8 cm, 462 cm) become missing the same way;
//   - several values of one variable at the same minute are all kept in file order (binning then
//     keeps the last);
//   - a descriptor that is missing (-1 or no line) is missing (NaN).
// Malformed input is an Error "file:line: problem" (the caller reports it and exits 2): no header,
// a line without exactly three fields, a time that is not HH:MM (minutes 00-59), a value that is
// not a finite number, an unknown parameter, a descriptor line at a time other than 00:00 or given
// twice, a RecordID that does not match the file name, and no RecordID at all.
//
// Outcomes-{a,b}.txt: CSV "RecordID,SAPS-I,SOFA,Length_of_stay,Survival,In-hospital_death", one
// line per record; In-hospital_death is 0 or 1; -1 = unknown in the other columns.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace memgrad::physionet {

// A time series variable with its physiological range (values outside are impossible).
struct Variable {
  const char* name;
  const char* unit;
  double lo, hi;
};
constexpr int kNumSeries = 37;  // the 36 time series and Weight
extern const std::array<Variable, kNumSeries> kSeries;
constexpr int kWeight = kNumSeries - 1;  // Weight's index in kSeries (last)
// Index of a series variable by name; -1 when there is none.
int series_index(std::string_view name);

// The descriptors other than RecordID, with their ranges (Gender and ICUType: their codes).
enum Descriptor { kAge, kGender, kHeight, kIcuType, kWeightDescriptor, kNumDescriptors };
extern const std::array<Variable, kNumDescriptors> kDescriptors;

struct Observation {
  int16_t minute = 0;    // since ICU admission
  int16_t variable = 0;  // index into kSeries
  float value = 0;
};

struct Record {
  int64_t id = 0;
  std::string source;  // file name for messages, e.g. "set-a/132539.txt"
  std::array<double, kNumDescriptors> descriptor{};  // NaN when missing
  std::vector<Observation> observations;             // valid ones, in file order
};

// Counts of what the parser and the binning met and handled; summed over records.
struct Quirks {
  int64_t records = 0, rows = 0;  // rows: observation lines (not the header, not blank lines)
  std::array<int64_t, kNumSeries> missing_marker{};  // series values of -1, dropped
  std::array<int64_t, kNumSeries> out_of_range{};    // impossible series values, dropped
  std::array<int64_t, kNumSeries> never_observed{};  // records with no valid value of the variable
  std::array<int64_t, kNumDescriptors> descriptor_missing{};       // -1 or no line (not range)
  std::array<int64_t, kNumDescriptors> descriptor_out_of_range{};  // made missing
  int64_t duplicate_times = 0;  // a second value of a variable at the same minute of a record
  int64_t records_without_series = 0;  // no valid series value at all
  int64_t beyond_window = 0;           // observations after the binning window (binning drops them)

  Quirks& operator+=(const Quirks& o);
  // One line per non-zero count, for the log.
  std::string summary() const;
};

// Parses one record. `source` names it in messages; `expected_id` (> 0) is the RecordID its file
// name promises (0: not checked). Throws Error "source:line: problem" on malformed input.
Record parse_record(std::string_view text, const std::string& source, int64_t expected_id,
                    Quirks& quirks);

struct Outcome {
  int64_t id = 0;
  double saps_i = NAN, sofa = NAN, length_of_stay = NAN, survival = NAN;  // NaN for -1
  int death = 0;                                                          // In-hospital_death
};

// Parses an outcome file (columns found by header name; RecordID and In-hospital_death required).
// Throws Error "path:line: problem" for a missing file or column, a malformed number, a death
// flag other than 0/1, and a RecordID given twice.
std::map<int64_t, Outcome> read_outcomes(const std::string& path);

}  // namespace memgrad::physionet
