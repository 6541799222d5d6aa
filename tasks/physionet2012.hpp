// PhysioNet/CinC Challenge 2012, in-hospital mortality from the first 48 hours of an ICU stay: the
// data set as the models see it (records read by physionet_record.hpp, from set-a/ and from
// set-b.tar.gz as distributed), hourly sequences, summary features, splits and batches. The
// `physionet2012` Task (physionet2012_task.cpp) is built on it; docs/physionet2012.md has the
// choices and the counts.
//
// Sets: set-a (4,000 stays with outcomes) is split by record into train / validation / test,
// stratified by the outcome (seeded: `split_seed`); set-b (4,000 more) is the untouched held-out
// test set. With `cv_folds`, set-a's training and validation stays are re-split into folds
// (LoadOptions). A set is read from the folder data_dir/<set>/ when it exists, else from
// data_dir/<set>.tar.gz (the distribution's set-b.tar.gz), never unpacked to disk.
//
// Normalisation statistics (medians, standard deviations, feature means) come from the training
// stays only.
//
// Batch fields (model dtype; B stays, T = hours * 60 / bin_minutes steps):
//   x         [B, T, F]  per step: for each of the 37 series variables (kSeries order) the z-scored
//                        last valid value of the bin, forward-filled within the stay, 0 (= the
//                        training median) before the first observation; then 37 observed-mask
//                        bits; then, with `time_since_last`, 37 times since the variable's last
//                        observation (hours / window hours: 0 in an observed bin, (t + 1) bins
//                        when not yet observed); then 8 static values repeated at every step:
//                        z-scored Age, Height, Weight at 00:00 (0 when missing), Gender (0/1, 0.5
//                        when missing), ICUType one-hot (4, all 0 when missing).
//                        Bins: [k, k+1) bin widths from admission; an observation at exactly the
//                        window's end (48:00) goes into the last bin; later ones are dropped.
//   features  [B, S]     the logistic-regression features (below), standardised with the
//                        training stays' mean and standard deviation, mean-imputed (0).
//   y         [B, 1]     In-hospital_death, 0 or 1.
//   record_id [B]        the RecordID (for inspection; models do not read it).
//
// Features (`features` setting; default "summary", the better of the two on set-a's validation
// stays with logreg, docs/physionet2012.md), over the valid observations inside the window:
//   "harutyunyan"  Harutyunyan et al. 2019's hand-crafted set (the paper's LR baseline): per
//                  variable min, max, mean, standard deviation, skewness and count on 7 windows
//                  (the whole window, its first 10 / 25 / 50 % and last 10 / 25 / 50 %, edges
//                  inclusive) = 37 x 42 = 1,554, + 8 static = 1,562. A window without a value has
//                  no min..skewness (imputed) and a count of 0. Skewness is the biased
//                  Fisher-Pearson coefficient m3 / m2^1.5 (scipy.stats.skew), 0 when m2 = 0.
//   "summary"      per variable first, last, min, max, mean and count (the list) = 222,
//                  + 8 static = 230.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/batch.hpp"
#include "tasks/physionet_record.hpp"

namespace memgrad::physionet {

struct LoadOptions {
  std::string data_dir = "../shared/data/physionet-challenge-2012";
  int hours = 48;                                    // the window read from each stay
  int bin_minutes = 60;                              // step width; must divide hours * 60
  double valid_fraction = 0.1, test_fraction = 0.1;  // of set-a, per class
  uint64_t split_seed = 1;
  // K-fold cross-validation (cv_folds = K >= 2; 0 = off): set-a's training and validation stays
  // are pooled and split into K folds by record, stratified by the outcome (seeded by
  // split_seed); fold cv_fold validates, the other K - 1 train. The test split and set-b are the
  // same as without it.
  int cv_folds = 0, cv_fold = 0;
  bool time_since_last = false;
  std::string features = "summary";  // or "harutyunyan"
};

// One set's records with their outcomes, ordered by RecordID.
struct ParsedSet {
  std::string name;  // "set-a"
  std::vector<Record> records;
  std::vector<Outcome> outcomes;  // outcomes[i] is records[i]'s
  Quirks quirks;
};

// Reads data_dir/<name>/ or data_dir/<name>.tar.gz (records: files named <RecordID>.txt) and
// data_dir/<outcome_file>. Throws an Error naming the file and line of bad input, a record
// without an outcome, an outcome without a record, and a set with neither a folder nor a tar.gz.
ParsedSet read_set(const std::string& data_dir, const std::string& name,
                   const std::string& outcome_file);

// The last valid value of each variable in each bin of one record: out [T * kNumSeries], NaN for
// none; returns how many observations lay after the window (dropped).
int64_t bin_last_values(const Record& r, int hours, int bin_minutes, std::vector<float>& out);

// The names of the features (e.g. "HR/first10/mean", "Age") and one record's raw features in that
// order (before standardisation; NaN where undefined): out holds feature_names(o).size() values.
std::vector<std::string> feature_names(const LoadOptions& o);
void raw_features(const Record& r, const LoadOptions& o, float* out);

struct Data {
  LoadOptions options;
  // set-a's stays, then set-b's (each by RecordID); `set_b_begin` is set-b's first index.
  std::vector<const Record*> records;
  std::vector<const Outcome*> outcomes;
  int64_t set_b_begin = 0;
  std::vector<int64_t> train, valid, test, set_b;  // indices into records
  int64_t steps = 0, inputs = 0, feature_size = 0;
  std::vector<float> x;         // [records, steps, inputs]
  std::vector<float> features;  // [records, feature_size]
  std::vector<std::string> input_names, feature_names;
  Quirks quirks_a, quirks_b;  // with beyond_window of this window
  double parse_seconds = 0, prepare_seconds = 0;
  std::shared_ptr<const ParsedSet> set_a_data, set_b_data;  // own the records
};

// Loads both sets (parsed records are cached in memory per data folder, so a second load in the
// same process only re-bins) and prepares splits, inputs and features. Throws Error for bad
// options (naming the setting) and bad data.
Data load(const LoadOptions& options);

// Fills x, features, y and record_id for the stays `indices` (indices into data.records).
void fill_batch(const Data& data, std::span<const int64_t> indices, DType dtype, Batch& batch);

}  // namespace memgrad::physionet
