// The PhysioNet 2012 loader and task on hand-made records written here: descriptors, the -1
// missing marker, impossible values, Weight as descriptor and series, duplicate times, malformed
// lines (file:line errors), the 48:00 edge bin, features, a tar.gz built here (ustar bytes
// written by the test, gzipped with zlib) and corrupt ones, splits, batches, evaluation with
// bootstrap intervals and model selection. The counts of the real data are checked by
// tests/tasks/test_physionet_real.cpp (ctest entry tasks_shared_data, skipped when ../shared/data
// is absent).
#include <doctest/doctest.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/error.hpp"
#include "engine/sha256.hpp"
#include "tasks/metrics.hpp"
#include "tasks/physionet2012.hpp"
#include "tasks/tar_gz.hpp"
#include "tasks/task.hpp"
#include "tests/tasks/physionet_fixture.hpp"
#include "tests/test_util.hpp"

using namespace memgrad;
using namespace memgrad::physionet;
using memgrad::test::TempDir;
using namespace memgrad::test::physionet;
namespace fs = std::filesystem;
using memgrad::test::error_of;

namespace {

LoadOptions small_options(const std::string& dir) {
  LoadOptions o;
  o.data_dir = dir;
  o.valid_fraction = 0.2;
  o.test_fraction = 0.2;
  return o;
}

}  // namespace

TEST_CASE("physionet: a record's descriptors, series, missing markers and impossible values") {
  const std::string text = descriptors(140001, "70", "1", "-1", "3", "80.5") +
                           "00:00,Weight,81\n"  // a second Weight at 00:00: the series
                           "00:10,HR,90\n"
                           "00:10,HR,95\n"    // the same minute again
                           "00:30,pH,735\n"   // pH x 100: impossible
                           "01:00,Temp,-1\n"  // the missing marker
                           "02:00,Weight,79\n"
                           "03:00,Weight,0\n"  // impossible
                           "\n";
  Quirks q;
  const Record r = parse_record(text, "rec.txt", 140001, q);
  CHECK(r.id == 140001);
  CHECK(r.descriptor[kAge] == 70);
  CHECK(r.descriptor[kGender] == 1);
  CHECK(std::isnan(r.descriptor[kHeight]));
  CHECK(r.descriptor[kIcuType] == 3);
  CHECK(r.descriptor[kWeightDescriptor] == 80.5);
  REQUIRE(r.observations.size() == 4);
  CHECK(r.observations[0].variable == kWeight);
  CHECK(r.observations[0].minute == 0);
  CHECK(r.observations[0].value == 81.0f);
  CHECK(r.observations[1].variable == hr());
  CHECK(r.observations[2].value == 95.0f);
  CHECK(r.observations[3].variable == kWeight);
  CHECK(r.observations[3].minute == 120);
  CHECK(q.rows == 13);
  CHECK(q.records == 1);
  CHECK(q.duplicate_times == 1);
  CHECK(q.out_of_range[size_t(series_index("pH"))] == 1);
  CHECK(q.out_of_range[size_t(kWeight)] == 1);
  CHECK(q.missing_marker[size_t(series_index("Temp"))] == 1);
  CHECK(q.descriptor_missing[kHeight] == 1);
  CHECK(q.never_observed[size_t(series_index("GCS"))] == 1);
  CHECK(q.never_observed[size_t(hr())] == 0);
  CHECK(q.summary().find("pH 1") != std::string::npos);

  // Descriptors out of range become missing and are counted; -1 Weight at 00:00 is missing.
  Quirks q2;
  const Record r2 = parse_record(descriptors(7, "70", "2", "462.3", "3", "-1"), "r2.txt", 0, q2);
  CHECK(std::isnan(r2.descriptor[kGender]));
  CHECK(std::isnan(r2.descriptor[kHeight]));
  CHECK(std::isnan(r2.descriptor[kWeightDescriptor]));
  CHECK(q2.descriptor_out_of_range[kGender] == 1);
  CHECK(q2.descriptor_out_of_range[kHeight] == 1);
  CHECK(q2.descriptor_missing[kWeightDescriptor] == 1);
  CHECK(q2.descriptor_missing[kGender] == 0);  // counted as out of range, not as missing
  CHECK(q2.descriptor_missing[kAge] == 0);
  CHECK(q2.records_without_series == 1);
  // CRLF line ends are read like LF.
  Quirks q3;
  const Record r3 = parse_record("Time,Parameter,Value\r\n00:00,RecordID,5\r\n00:05,HR,80\r\n",
                                 "crlf.txt", 5, q3);
  REQUIRE(r3.observations.size() == 1);
  CHECK(r3.observations[0].value == 80.0f);
}

TEST_CASE("physionet: malformed records are errors naming file and line") {
  const std::string head = std::string(kHeader) + "00:00,RecordID,140001\n";
  const std::pair<const char*, const char*> cases[] = {
      {"1:5,HR,80", "malformed time '1:5'"},
      {"00:75,HR,80", "malformed time '00:75'"},
      {"0a:10,HR,80", "malformed time"},
      {"00:10,Foo,1", "unknown parameter 'Foo'"},
      {"00:10,,1", "unknown parameter ''"},
      {"00:10,HR", "expected 3 comma-separated fields"},
      {"00:10,HR,80,1", "expected 3 comma-separated fields"},
      {"00:10,HR,abc", "value 'abc' of HR is not a finite number"},
      {"00:10,HR,nan", "is not a finite number"},
      {"00:10,HR,", "is not a finite number"},
      {"05:00,Age,50", "Age at 05:00 (descriptors are at 00:00)"},
      {"00:00,RecordID,140001", "a second RecordID"},
  };
  for (const auto& [line, want] : cases) {
    Quirks q;
    const std::string msg =
        error_of([&] { parse_record(head + line + "\n", "set-a/140001.txt", 140001, q); });
    INFO(line, " -> ", msg);
    CHECK(msg.find("set-a/140001.txt:3: ") == 0);
    CHECK(msg.find(want) != std::string::npos);
  }
  Quirks q;
  CHECK(error_of([&] {
          parse_record("Time,Param,Value\n", "r.txt", 0, q);
        }).find("r.txt:1: expected the header") == 0);
  CHECK(error_of([&] {
          parse_record(head, "r.txt", 140002, q);
        }).find("r.txt:2: RecordID 140001 does not match the file name (140002)") == 0);
  CHECK(error_of([&] {
          parse_record(std::string(kHeader) + "00:05,HR,80\n", "r.txt", 0, q);
        }).find("r.txt: no RecordID line") == 0);
  CHECK(error_of([&] { parse_record("", "r.txt", 0, q); }).find("r.txt: empty file") == 0);
  const std::string dup_age = descriptors(1) + "00:00,Age,71\n";
  CHECK(error_of([&] {
          parse_record(dup_age, "r.txt", 1, q);
        }).find("r.txt:8: a second Age descriptor") == 0);
}

TEST_CASE("physionet: hourly bins keep the last value; 48:00 falls in the last bin") {
  const std::string text = descriptors(9) +
                           "00:10,HR,60\n00:50,HR,70\n01:00,HR,80\n"
                           "05:00,Na,140\n05:00,Na,141\n"  // duplicate time: the later line wins
                           "47:59,HR,90\n48:00,HR,100\n48:01,HR,110\n";
  Quirks q;
  const Record r = parse_record(text, "r.txt", 9, q);
  std::vector<float> bins;
  CHECK(bin_last_values(r, 48, 60, bins) == 1);  // 48:01 is after the window
  REQUIRE(bins.size() == size_t(48 * kNumSeries));
  auto at = [&](int t, int v) { return bins[size_t(t * kNumSeries + v)]; };
  CHECK(at(0, hr()) == 70.0f);
  CHECK(at(1, hr()) == 80.0f);
  CHECK(std::isnan(at(2, hr())));
  CHECK(at(5, series_index("Na")) == 141.0f);
  CHECK(at(47, hr()) == 100.0f);
  // A 24-hour window of 30-minute bins: 48 steps, 00:50 in bin 1, nothing after 24:00.
  CHECK(bin_last_values(r, 24, 30, bins) == 3);
  CHECK(at(0, hr()) == 60.0f);
  CHECK(at(1, hr()) == 70.0f);
  CHECK(at(2, hr()) == 80.0f);
  // Out of time order: put in order (stably) before binning.
  Quirks q2;
  const Record back =
      parse_record(descriptors(10) + "02:10,HR,75\n01:10,HR,65\n02:10,HR,76\n", "r.txt", 10, q2);
  bin_last_values(back, 48, 60, bins);
  CHECK(at(1, hr()) == 65.0f);
  CHECK(at(2, hr()) == 76.0f);
}

TEST_CASE("physionet: Harutyunyan and summary features of a hand-made series") {
  const std::string text = descriptors(11, "70", "-1", "175", "2", "80") +
                           "00:00,HR,60\n02:00,HR,80\n24:00,HR,100\n47:00,HR,120\n"
                           "01:00,GCS,3\n02:00,GCS,3\n03:00,GCS,15\n";
  Quirks q;
  const Record r = parse_record(text, "r.txt", 11, q);
  LoadOptions o;
  o.features = "harutyunyan";
  const std::vector<std::string> names = feature_names(o);
  REQUIRE(names.size() == 1562);
  std::vector<float> f(names.size());
  raw_features(r, o, f.data());
  auto get = [&](const std::string& name) {
    const auto it = std::find(names.begin(), names.end(), name);
    REQUIRE(it != names.end());
    return double(f[size_t(it - names.begin())]);
  };
  CHECK(get("HR/all/min") == 60);
  CHECK(get("HR/all/max") == 120);
  CHECK(get("HR/all/mean") == doctest::Approx(90));
  CHECK(get("HR/all/std") == doctest::Approx(std::sqrt(500.0)));
  CHECK(get("HR/all/skew") == doctest::Approx(0).epsilon(1e-6));
  CHECK(get("HR/all/count") == 4);
  CHECK(get("HR/first10/count") == 2);  // [0, 4.8 h]
  CHECK(get("HR/first10/mean") == doctest::Approx(70));
  CHECK(get("HR/first50/count") == 3);  // 24:00 is the edge, included
  CHECK(get("HR/last10/count") == 1);
  CHECK(get("HR/last10/std") == 0);
  CHECK(get("HR/last10/skew") == 0);
  CHECK(get("HR/last50/count") == 2);
  // GCS 3, 3, 15: m2 = 32, m3 = 128, skewness 128 / 32^1.5.
  CHECK(get("GCS/all/skew") == doctest::Approx(128 / std::pow(32.0, 1.5)));
  CHECK(std::isnan(get("GCS/last10/mean")));
  CHECK(get("GCS/last10/count") == 0);
  CHECK(std::isnan(get("pH/all/min")));
  CHECK(get("Age") == 70);
  CHECK(std::isnan(get("Gender")));
  CHECK(get("ICUType=2") == 1);
  CHECK(get("ICUType=3") == 0);

  o.features = "summary";
  const std::vector<std::string> s_names = feature_names(o);
  REQUIRE(s_names.size() == 230);
  std::vector<float> s(s_names.size());
  raw_features(r, o, s.data());
  const auto hr_at =
      size_t(std::find(s_names.begin(), s_names.end(), "HR/first") - s_names.begin());
  CHECK(s[hr_at] == 60.0f);       // first
  CHECK(s[hr_at + 1] == 120.0f);  // last
  CHECK(s[hr_at + 2] == 60.0f);   // min
  CHECK(s[hr_at + 3] == 120.0f);  // max
  CHECK(s[hr_at + 4] == 90.0f);   // mean
  CHECK(s[hr_at + 5] == 4.0f);    // count
}

TEST_CASE("physionet: tar.gz archives are read in memory; corrupt ones are errors naming them") {
  TempDir tmp;
  const std::string gz = (tmp.path / "a.tar.gz").string();
  const std::string big(3000, 'x');
  write_gz(gz, tar_of({{"1.txt", "hello\n"}, {"2.txt", big}, {"empty.txt", ""}}, "set-b"));
  const TarArchive ar = read_tar_gz(gz);
  REQUIRE(ar.files.size() == 3);  // the directory entry is skipped
  CHECK(ar.files[0].name == "set-b/1.txt");
  CHECK(ar.data(ar.files[0]) == "hello\n");
  CHECK(ar.data(ar.files[1]) == big);
  CHECK(ar.data(ar.files[2]).empty());
  // Two gzip members one after the other are one stream.
  const std::string gz2 = (tmp.path / "two.gz").string();
  const std::string first = (tmp.path / "first.gz").string();
  write_gz(first, "abc");
  write_gz(gz2, "def");
  write_bytes(gz2, test::read_text(first) + test::read_text(gz2));
  CHECK(gunzip_file(gz2) == "abcdef");

  const std::string bytes = test::read_text(gz);
  std::string corrupt = bytes;
  for (size_t i = 20; i < 40; ++i) corrupt[i] = char(corrupt[i] ^ 0x5a);
  write_bytes(gz, corrupt);
  std::string msg = error_of([&] { read_tar_gz(gz); });
  INFO(msg);
  CHECK(msg.find(gz + ": corrupt gzip data") == 0);
  write_bytes(gz, bytes.substr(0, bytes.size() / 2));
  CHECK(error_of([&] { read_tar_gz(gz); }).find(gz + ": truncated gzip stream") == 0);
  write_bytes(gz, "Time,Parameter,Value\n");
  CHECK(error_of([&] { read_tar_gz(gz); }).find(gz + ": not a gzip file") == 0);
  CHECK(error_of([&] { read_tar_gz(gz + ".missing"); }).find("cannot open") != std::string::npos);
  // A tar header with a wrong checksum, and an entry whose data is cut off.
  std::string tar = tar_of({{"1.txt", "hello\n"}}, "set-b");
  tar[512 + 2] = 'X';  // the file's name, after the checksum was computed
  write_gz(gz, tar);
  CHECK(error_of([&] { read_tar_gz(gz); }).find("tar entry 1 ('seX-b/1.txt')") !=
        std::string::npos);
  CHECK(error_of([&] { read_tar_gz(gz); }).find("checksum mismatch") != std::string::npos);
  write_gz(gz, tar_header("set-b/1.txt", 5000, '0') + "short");
  CHECK(error_of([&] { read_tar_gz(gz); }).find("run past the end of the archive") !=
        std::string::npos);
}

TEST_CASE("physionet: bootstrap intervals are seeded percentiles") {
  const std::vector<int> labels = {0, 1, 0, 1, 1, 0, 0, 1, 0, 0};
  const std::vector<double> perfect = {0, 1, 0, 1, 1, 0, 0, 1, 0, 0};
  const metrics::BootstrapInterval p =
      metrics::bootstrap_interval(labels, perfect, &metrics::auc_roc, 200, 3);
  CHECK(p.low == 1);
  CHECK(p.high == 1);
  CHECK(p.used + p.skipped == 200);
  const std::vector<double> noisy = {0.1, 0.4, 0.35, 0.8, 0.2, 0.7, 0.3, 0.9, 0.5, 0.05};
  const auto a = metrics::bootstrap_interval(labels, noisy, &metrics::average_precision, 500, 1);
  const auto b = metrics::bootstrap_interval(labels, noisy, &metrics::average_precision, 500, 1);
  const auto c = metrics::bootstrap_interval(labels, noisy, &metrics::average_precision, 500, 2);
  CHECK(a.low == b.low);
  CHECK(a.high == b.high);
  CHECK((a.low != c.low || a.high != c.high));
  const double ap = *metrics::average_precision(labels, noisy);
  CHECK(a.low < ap);
  CHECK(a.high > ap);
  CHECK_THROWS_AS(metrics::bootstrap_interval({1, 1}, {0.1, 0.2}, &metrics::auc_roc, 10, 1),
                  std::invalid_argument);
}

TEST_CASE("physionet: a data folder with set-a/ and set-b.tar.gz: splits, inputs, features") {
  TempDir tmp;
  const MadeData m = make_data(tmp);
  const Data d = load(small_options(m.dir));
  REQUIRE(d.records.size() == 48);
  CHECK(d.set_b_begin == 40);
  CHECK(d.records[40]->id == 142001);
  CHECK(d.records[40]->source == m.dir + "/set-b.tar.gz:set-b/142001.txt");
  // Stratified: 10 deaths -> 2 / 2 / 6, 30 survivors -> 6 / 6 / 18.
  auto deaths = [&](const std::vector<int64_t>& s) {
    int k = 0;
    for (int64_t i : s) k += d.outcomes[size_t(i)]->death;
    return k;
  };
  CHECK(d.valid.size() == 8);
  CHECK(d.test.size() == 8);
  CHECK(d.train.size() == 24);
  CHECK(deaths(d.valid) == 2);
  CHECK(deaths(d.test) == 2);
  CHECK(deaths(d.train) == 6);
  CHECK(d.set_b.size() == 8);
  std::set<int64_t> all(d.train.begin(), d.train.end());
  all.insert(d.valid.begin(), d.valid.end());
  all.insert(d.test.begin(), d.test.end());
  CHECK(all.size() == 40);
  CHECK(*all.rbegin() < d.set_b_begin);
  for (int i = 0; i < 40; ++i) CHECK(d.outcomes[size_t(i)]->death == m.a_deaths[size_t(i)]);
  // The same seed gives the same split; another seed another one.
  const Data again = load(small_options(m.dir));
  CHECK(again.valid == d.valid);
  LoadOptions other = small_options(m.dir);
  other.split_seed = 2;
  CHECK(load(other).valid != d.valid);

  // Quirks: every record has Na twice at 05:00; the Temp at 48:00 stays in the window.
  CHECK(d.quirks_a.records == 40);
  CHECK(d.quirks_a.duplicate_times == 40);
  CHECK(d.quirks_b.records == 8);
  CHECK(d.quirks_a.beyond_window == 0);
  CHECK(d.quirks_a.never_observed[size_t(series_index("GCS"))] == 20);

  // x: HR z-scored with the training stays' median and sd, forward-filled; its mask.
  REQUIRE(d.steps == 48);
  REQUIRE(d.inputs == 82);
  std::vector<double> train_hr;
  std::vector<float> bins;
  for (int64_t i : d.train) {
    bin_last_values(*d.records[size_t(i)], 48, 60, bins);
    for (int t = 0; t < 48; ++t)
      if (!std::isnan(bins[size_t(t * kNumSeries + hr())]))
        train_hr.push_back(bins[size_t(t * kNumSeries + hr())]);
  }
  std::sort(train_hr.begin(), train_hr.end());
  const double median = 0.5 * (train_hr[train_hr.size() / 2 - 1] + train_hr[train_hr.size() / 2]);
  double mean = 0, var = 0;
  for (double v : train_hr) mean += v;
  mean /= double(train_hr.size());
  for (double v : train_hr) var += (v - mean) * (v - mean);
  const double sd = std::sqrt(var / double(train_hr.size()));
  const int64_t i = 5;  // record 132006: HR 75 at 00:10, 100 at 03:20
  auto x = [&](int t, int k) { return double(d.x[size_t((i * 48 + t) * 82 + k)]); };
  CHECK(x(0, hr()) == doctest::Approx((75 - median) / sd).epsilon(1e-5));
  CHECK(x(2, hr()) == doctest::Approx((75 - median) / sd).epsilon(1e-5));  // forward-filled
  CHECK(x(3, hr()) == doctest::Approx((100 - median) / sd).epsilon(1e-5));
  CHECK(x(47, hr()) == doctest::Approx((100 - median) / sd).epsilon(1e-5));
  CHECK(x(0, kNumSeries + hr()) == 1);
  CHECK(x(1, kNumSeries + hr()) == 0);
  CHECK(x(3, kNumSeries + hr()) == 1);
  const int gcs = series_index("GCS"), ph = series_index("pH");
  CHECK(x(0, gcs) == 0);  // record 5 has no GCS: the median, 0
  CHECK(x(0, kNumSeries + gcs) == 0);
  CHECK(x(47, ph) == 0);
  CHECK(x(47, kNumSeries + series_index("Temp")) == 1);  // 48:00, the last bin
  // Static: Gender 1 (record 5 is odd), ICUType 1 + 5 % 4 = 2.
  CHECK(x(10, 74 + 3) == 1);
  CHECK(x(10, 74 + 4 + 1) == 1);
  CHECK(x(10, 74 + 4 + 0) == 0);
  CHECK(d.x[size_t((0 * 48 + 0) * 82 + 74 + 3)] == 0.5f);  // record 0: gender missing
  CHECK(d.input_names[size_t(kNumSeries + hr())] == "HR/mask");

  // Features: standardised over the training stays (mean 0), finite everywhere.
  REQUIRE(d.feature_size == 230);  // "summary", the default
  CHECK(
      std::all_of(d.features.begin(), d.features.end(), [](float v) { return std::isfinite(v); }));
  const auto age = size_t(std::find(d.feature_names.begin(), d.feature_names.end(), "Age") -
                          d.feature_names.begin());
  double age_mean = 0;
  for (int64_t k : d.train) age_mean += d.features[size_t(k) * 230 + age];
  CHECK(age_mean / double(d.train.size()) == doctest::Approx(0).epsilon(1e-5));

  // time_since_last: 37 more inputs, 0 in an observed bin, growing after.
  LoadOptions delta = small_options(m.dir);
  delta.time_since_last = true;
  const Data dd = load(delta);
  REQUIRE(dd.inputs == 119);
  auto xd = [&](int t, int k) { return double(dd.x[size_t((i * 48 + t) * 119 + k)]); };
  CHECK(xd(0, 2 * kNumSeries + hr()) == 0);
  CHECK(xd(1, 2 * kNumSeries + hr()) == doctest::Approx(1.0 / 48));
  CHECK(xd(3, 2 * kNumSeries + hr()) == 0);
  CHECK(xd(0, 2 * kNumSeries + gcs) == doctest::Approx(1.0 / 48));
}

TEST_CASE("physionet: cross-validation folds partition train and valid, stratified, test kept") {
  TempDir tmp;
  const MadeData m = make_data(tmp);
  const Data plain = load(small_options(m.dir));
  std::vector<int64_t> pool = plain.train;
  pool.insert(pool.end(), plain.valid.begin(), plain.valid.end());
  std::sort(pool.begin(), pool.end());
  // 32 pooled stays (8 deaths) in 4 folds: each validates 8 stays with 2 deaths.
  std::vector<int64_t> seen;
  for (int f = 0; f < 4; ++f) {
    LoadOptions o = small_options(m.dir);
    o.cv_folds = 4;
    o.cv_fold = f;
    const Data d = load(o);
    CHECK(d.test == plain.test);
    CHECK(d.set_b == plain.set_b);
    CHECK(d.valid.size() == 8);
    int deaths = 0;
    for (int64_t i : d.valid) deaths += d.outcomes[size_t(i)]->death;
    CHECK(deaths == 2);
    std::vector<int64_t> both = d.train;
    both.insert(both.end(), d.valid.begin(), d.valid.end());
    std::sort(both.begin(), both.end());
    CHECK(both == pool);  // train and valid partition the pool
    seen.insert(seen.end(), d.valid.begin(), d.valid.end());
    CHECK(load(o).valid == d.valid);  // seeded
  }
  std::sort(seen.begin(), seen.end());
  CHECK(seen == pool);  // every pooled stay validates in exactly one fold
  LoadOptions bad = small_options(m.dir);
  bad.cv_folds = 4;
  bad.cv_fold = 4;
  CHECK(error_of([&] { load(bad); }).find("cv_fold must be in [0, cv_folds) = [0, 4), got 4") !=
        std::string::npos);
  bad.cv_folds = 1;
  bad.cv_fold = 0;
  CHECK(error_of([&] { load(bad); }).find("cv_folds must be 0") != std::string::npos);
  bad.cv_folds = 0;
  bad.cv_fold = 2;
  CHECK(error_of([&] { load(bad); }).find("cv_fold needs cv_folds") != std::string::npos);
}

TEST_CASE("physionet: the data folder's SHA256SUMS.txt is checked, a mismatch named") {
  // A folder whose SHA256SUMS.txt lists every file, with `edit` applied to one file first.
  auto folder = [](const TempDir& tmp, const std::string& edited, const std::string& extra) {
    const MadeData m = make_data(tmp);
    std::string sums;
    std::vector<std::string> files = {"Outcomes-a.txt", "Outcomes-b.txt", "set-b.tar.gz"};
    for (int64_t id : m.a_ids) files.push_back("set-a/" + std::to_string(id) + ".txt");
    for (const std::string& f : files) sums += sha256_file_hex(m.dir + "/" + f) + "  " + f + "\n";
    tmp.write("SHA256SUMS.txt", sums);
    if (!edited.empty()) {
      std::string bytes = test::read_text(m.dir + "/" + edited);
      bytes += extra;
      write_bytes(m.dir + "/" + edited, bytes);
    }
    return m;
  };
  {
    TempDir tmp;
    const MadeData m = folder(tmp, "", "");
    CHECK(load(small_options(m.dir)).records.size() == 48);
  }
  {  // a record changed after the list was made: line 4 lists the first set-a record
    TempDir tmp;
    const MadeData m = folder(tmp, "set-a/132001.txt", "01:00,HR,80\n");
    const std::string e = error_of([&] { load(small_options(m.dir)); });
    CHECK(e.find(m.dir + "/set-a/132001.txt: SHA-256 differs from " + m.dir +
                 "/SHA256SUMS.txt:4 (expected ") == 0);
    CHECK(e.find("corrupt, truncated or edited") != std::string::npos);
  }
  {  // the archive
    TempDir tmp;
    const MadeData m = folder(tmp, "set-b.tar.gz", std::string(10, '\0'));
    CHECK(error_of([&] {
            load(small_options(m.dir));
          }).find(m.dir + "/set-b.tar.gz: SHA-256 differs from " + m.dir + "/SHA256SUMS.txt:3") ==
          0);
  }
  {  // an outcome file
    TempDir tmp;
    const MadeData m = folder(tmp, "Outcomes-b.txt", "\n");
    CHECK(error_of([&] {
            load(small_options(m.dir));
          }).find(m.dir + "/Outcomes-b.txt: SHA-256 differs from " + m.dir + "/SHA256SUMS.txt:2") ==
          0);
  }
  {  // a record the list does not have
    TempDir tmp;
    const MadeData m = folder(tmp, "", "");
    tmp.write("set-a/132999.txt", made_record(132999, 1));
    CHECK(error_of([&] {
            load(small_options(m.dir));
          }).find(m.dir + "/set-a/132999.txt: not listed in " + m.dir + "/SHA256SUMS.txt") == 0);
  }
}

TEST_CASE("physionet: missing outcomes, stray outcomes and missing sets are errors") {
  TempDir tmp;
  const MadeData m = make_data(tmp);
  const std::string outcomes = test::read_text(m.dir + "/Outcomes-a.txt");
  // Drop record 132003's line.
  const size_t at = outcomes.find("132003,");
  std::string without = outcomes;
  without.erase(at, outcomes.find('\n', at) - at + 1);
  write_bytes(m.dir + "/Outcomes-a.txt", without);
  CHECK(error_of([&] {
          read_set(m.dir, "set-a", "Outcomes-a.txt");
        }).find("Outcomes-a.txt: no outcome for record 132003") != std::string::npos);
  write_bytes(m.dir + "/Outcomes-a.txt", outcomes + "199999,1,1,1,-1,0\n");
  CHECK(error_of([&] {
          read_set(m.dir, "set-a", "Outcomes-a.txt");
        }).find("outcome for record 199999 which set-a does not have") != std::string::npos);
  write_bytes(m.dir + "/Outcomes-a.txt", outcomes + "132001,1,1,1,-1,0\n");
  CHECK(error_of([&] {
          read_set(m.dir, "set-a", "Outcomes-a.txt");
        }).find("Outcomes-a.txt:42: RecordID 132001 is listed twice") != std::string::npos);
  write_bytes(m.dir + "/Outcomes-a.txt", outcomes + "132050,1,1,1,-1,2\n");
  CHECK(error_of([&] {
          read_set(m.dir, "set-a", "Outcomes-a.txt");
        }).find("Outcomes-a.txt:42: In-hospital_death must be 0 or 1") != std::string::npos);
  write_bytes(m.dir + "/Outcomes-a.txt", outcomes);
  // A malformed record inside set-b.tar.gz is named by archive and member.
  tmp.write("set-c/150001.txt", descriptors(150001) + "12:3x,HR,80\n");
  CHECK(error_of([&] {
          read_set(m.dir, "set-c", "Outcomes-a.txt");
        }).find("set-c/150001.txt:8: malformed time '12:3x'") != std::string::npos);
  write_gz(m.dir + "/set-d.tar.gz",
           tar_of({{"150002.txt", descriptors(150002) + "01:00,Lactate2,1\n"}}, "set-d"));
  CHECK(error_of([&] {
          read_set(m.dir, "set-d", "Outcomes-a.txt");
        }).find("set-d.tar.gz:set-d/150002.txt:8: unknown parameter 'Lactate2'") !=
        std::string::npos);
  tmp.write("set-e/150003.txt", descriptors(150004));
  CHECK(error_of([&] {
          read_set(m.dir, "set-e", "Outcomes-a.txt");
        }).find("RecordID 150004 does not match the file name (150003)") != std::string::npos);
  CHECK(error_of([&] {
          read_set(m.dir, "set-z", "Outcomes-a.txt");
        }).find("no set-z/ folder and no set-z.tar.gz") != std::string::npos);
  // Bad options name the setting.
  LoadOptions o = small_options(m.dir);
  o.bin_minutes = 7;
  CHECK(error_of([&] { load(o); }).find("bin_minutes") != std::string::npos);
  o = small_options(m.dir);
  o.features = "all";
  CHECK(error_of([&] { load(o); }).find("features must be") != std::string::npos);
}

TEST_CASE("physionet: the task's batches, evaluation, selection and single stays") {
  TempDir tmp;
  const MadeData m = make_data(tmp);
  auto task = create_task("physionet2012", {{"data_dir", m.dir},
                                            {"valid_fraction", 0.2},
                                            {"test_fraction", 0.2},
                                            {"bootstrap_resamples", 200}});
  const nlohmann::json dims = task->model_dims();
  CHECK(dims["input_size"] == 82);
  CHECK(dims["feature_size"] == 230);
  CHECK(dims["output_size"] == 1);
  CHECK(dims["steps"] == 48);
  CHECK(task->steps_per_epoch(4) == 6);
  // An epoch's batches cover the 24 training stays once; the next epoch in another order.
  Batch b;
  std::set<int64_t> seen;
  std::vector<int64_t> order0, order1;
  for (int64_t step = 0; step < 12; ++step) {
    task->train_batch(step, 4, DType::f32, b);
    CHECK(b.get("x").shape() == Shape({4, 48, 82}));
    CHECK(b.get("features").shape() == Shape({4, 230}));
    CHECK(b.get("y").shape() == Shape({4, 1}));
    for (int k = 0; k < 4; ++k) {
      const auto id = int64_t(b.get("record_id").at(k));
      (step < 6 ? order0 : order1).push_back(id);
      if (step < 6) seen.insert(id);
      CHECK(id < 142001);
    }
  }
  CHECK(seen.size() == 24);
  CHECK(order0 != order1);
  task->train_batch(3, 4, DType::f64, b);
  CHECK(b.get("x").dtype() == DType::f64);
  CHECK(task->validation_batches(3) == 3);

  // A predictor that knows the label scores 1 everywhere; its negation 0.
  auto oracle = [](double sign) {
    return Predictor([sign](const Batch& batch) {
      Tensor s = batch.get("y").clone();
      for (int64_t i = 0; i < s.numel(); ++i) s.set(i, sign * s.at(i));
      return s;
    });
  };
  const nlohmann::json good = task->evaluate(oracle(1), 3, DType::f32);
  for (const char* split : {"valid", "test", "set_b"}) {
    INFO(split);
    CHECK(good[split]["auc_roc"] == 1.0);
    CHECK(good[split]["auc_pr"] == 1.0);
  }
  CHECK(good["set_b"]["stays"] == 8);
  CHECK(good["set_b"]["deaths"] == 2);
  CHECK(good["valid"]["stays"] == 8);
  CHECK(good["set_b"]["auc_roc_ci95"] == nlohmann::json({1.0, 1.0}));
  CHECK(good["set_b"]["bootstrap_resamples"] == 200);
  const nlohmann::json bad = task->evaluate(oracle(-1), 3, DType::f32);
  CHECK(bad["set_b"]["auc_roc"] == 0.0);
  CHECK(task->format_metrics(good).find("set_b") != std::string::npos);
  CHECK(task->selection_score(oracle(1), 3, DType::f32) == 1.0);
  CHECK(task->selection_metric() == "valid_auc_roc");
  // Predictions of the wrong shape or not finite are errors.
  CHECK(error_of([&] {
          task->evaluate(
              [](const Batch& batch) {
                return Tensor::zeros(Shape{batch.size, 2}, DType::f32);
              },
              3, DType::f32);
        }).find("one logit per stay") != std::string::npos);

  // Single stays: set-b by index, any stay by RecordID.
  CHECK(task->test_examples() == 8);
  task->test_example(0, DType::f32, b);
  CHECK(b.get("record_id").at(0) == 142001);
  const Task::Lines lines = task->describe_example(b, Tensor::scalar(0.0, DType::f32));
  CHECK(lines.at(0).second == "142001 (set-b, held out)");
  CHECK(lines.at(3).second.find("0.5000") == 0);
  bool has_hr = false;
  for (const auto& [name, text] : lines)
    if (name == "HR by 60 min") has_hr = text.rfind("73 . . 96 .", 0) == 0;  // record 3's HR
  CHECK(has_hr);
  task->text_example("132002", DType::f32, b);
  CHECK(b.get("record_id").at(0) == 132002);
  CHECK(error_of([&] { task->text_example("99", DType::f32, b); }).find("no stay with RecordID") !=
        std::string::npos);
  CHECK(error_of([&] {
          create_task("physionet2012", {{"data_dir", m.dir}, {"hours", 0}});
        }).find("hours") != std::string::npos);
  CHECK(error_of([&] {
          create_task("physionet2012", {{"data_dir", m.dir}, {"bogus", 1}});
        }).find("unknown setting 'bogus'") != std::string::npos);
}
