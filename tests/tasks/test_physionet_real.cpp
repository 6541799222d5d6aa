// The counted facts of the real PhysioNet 2012 data (SOURCE.md, the planning notes' section 3):
// 4,000 records per set, 554 / 568 in-hospital deaths, 1,678,892 / 1,614,816 observation rows,
// set-a's ICU types, the quirks the loader counts, the SAPS-I score's AUC on set-b (0.6709 over
// 3,838 stays with a score), and the whole load (set-b read from its tar.gz) in a few seconds.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "tasks/metrics.hpp"
#include "tasks/physionet2012.hpp"
#include "tests/test_util.hpp"

using namespace memgrad;
using namespace memgrad::physionet;

namespace {
// ../shared/data/physionet-challenge-2012 (MEMGRAD_SHARED_DIR replaces ../shared).
const std::string kPhysionetDir = memgrad::test::shared_path("data/physionet-challenge-2012");
}  // namespace

namespace {
int deaths(const ParsedSet& s) {
  int k = 0;
  for (const Outcome& o : s.outcomes) k += o.death;
  return k;
}
}  // namespace

TEST_CASE("physionet real data: records, deaths and rows of set-a and set-b" *
          doctest::test_suite(memgrad::test::kSharedData)) {
  if (!memgrad::test::shared_data_present(kPhysionetDir)) return;
  const ParsedSet a = read_set(kPhysionetDir, "set-a", "Outcomes-a.txt");
  CHECK(a.records.size() == 4000);
  CHECK(deaths(a) == 554);
  CHECK(a.quirks.rows == 1678892);
  CHECK(a.records.front().id == 132539);
  int icu[5] = {0, 0, 0, 0, 0};
  for (const Record& r : a.records) ++icu[int(r.descriptor[kIcuType])];
  CHECK(icu[1] == 577);
  CHECK(icu[2] == 874);
  CHECK(icu[3] == 1481);
  CHECK(icu[4] == 1068);
  // Quirks (docs/physionet2012.md): impossible values dropped, missing descriptors.
  int64_t dropped = 0;
  for (int64_t n : a.quirks.out_of_range) dropped += n;
  CHECK(dropped == 2121);
  CHECK(a.quirks.out_of_range[size_t(series_index("pH"))] == 10);
  CHECK(a.quirks.descriptor_missing[kHeight] == 1894);
  CHECK(a.quirks.descriptor_out_of_range[kHeight] == 16);
  CHECK(a.quirks.duplicate_times == 3598);
  CHECK(a.quirks.records_without_series == 3);

  const ParsedSet b = read_set(kPhysionetDir, "set-b", "Outcomes-b.txt");  // from set-b.tar.gz
  CHECK(b.records.size() == 4000);
  CHECK(deaths(b) == 568);
  CHECK(b.quirks.rows == 1614816);
  dropped = 0;
  for (int64_t n : b.quirks.out_of_range) dropped += n;
  CHECK(dropped == 1585);
  CHECK(b.quirks.descriptor_missing[kHeight] == 1930);
  CHECK(b.records.front().source.find("set-b.tar.gz:set-b/") != std::string::npos);
  // SAPS-I of the outcome file against the outcome, stays with a score.
  std::vector<int> labels;
  std::vector<double> saps;
  for (const Outcome& o : b.outcomes)
    if (!std::isnan(o.saps_i)) labels.push_back(o.death), saps.push_back(o.saps_i);
  CHECK(labels.size() == 3838);
  CHECK(*metrics::auc_roc(labels, saps) == doctest::Approx(0.6709).epsilon(1e-4));
  MESSAGE("set-a quirks: " << a.quirks.summary());
  MESSAGE("set-b quirks: " << b.quirks.summary());
}

TEST_CASE("physionet real data: the full load in seconds, splits, finite inputs" *
          doctest::test_suite(memgrad::test::kSharedData)) {
  if (!memgrad::test::shared_data_present(kPhysionetDir)) return;
  LoadOptions o;
  o.data_dir = kPhysionetDir;
  const auto t0 = std::chrono::steady_clock::now();
  const Data d = load(o);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("load: " << seconds << " s (read " << d.parse_seconds << " s, prepared "
                   << d.prepare_seconds << " s)");
  CHECK(seconds < 60);  // a few seconds here; generous for a loaded machine
  CHECK(d.train.size() == 3200);
  CHECK(d.valid.size() == 400);
  CHECK(d.test.size() == 400);
  CHECK(d.set_b.size() == 4000);
  int valid_deaths = 0;
  for (int64_t i : d.valid) valid_deaths += d.outcomes[size_t(i)]->death;
  CHECK(valid_deaths == 55);  // round(554 * 0.1)
  CHECK(d.inputs == 82);
  CHECK(d.feature_size == 230);
  CHECK(std::all_of(d.x.begin(), d.x.end(), [](float v) { return std::isfinite(v); }));
  CHECK(
      std::all_of(d.features.begin(), d.features.end(), [](float v) { return std::isfinite(v); }));
  CHECK(d.quirks_a.beyond_window == 0);  // no observation after 48:00
}
