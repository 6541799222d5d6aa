// PhysioNet 2012 sets, sequences, features, splits and batches (see physionet2012.hpp).
#include "tasks/physionet2012.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <numeric>

#include "engine/checksums.hpp"
#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "engine/threads.hpp"
#include "tasks/tar_gz.hpp"

namespace memgrad::physionet {
namespace fs = std::filesystem;

namespace {

constexpr int kStatic = 8;  // Age, Height, Weight, Gender, ICUType one-hot (4)
constexpr uint64_t kSplitSalt = 0x9e7a'5012'0000'0001ULL;
constexpr uint64_t kFoldSalt = 0x9e7a'5012'0000'0003ULL;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The RecordID a file name promises ("set-b/142675.txt" -> 142675); an Error otherwise.
int64_t id_of_file(const std::string& shown, const std::string& name) {
  const std::string stem = fs::path(name).stem().string();
  int64_t id = 0;
  bool ok = !stem.empty() && stem.size() <= 12;
  for (char c : stem) {
    if (c < '0' || c > '9') ok = false;
    id = id * 10 + (c - '0');
  }
  MG_CHECK(ok && id > 0, shown, ": a record file must be named <RecordID>.txt");
  return id;
}

struct RawFile {
  std::string shown;  // name for messages
  std::string name;   // file name inside the set
  std::string_view text;
};

}  // namespace

ParsedSet read_set(const std::string& data_dir, const std::string& name,
                   const std::string& outcome_file) {
  ParsedSet set;
  set.name = name;
  const fs::path dir = fs::path(data_dir) / name;
  const fs::path tgz = fs::path(data_dir) / (name + ".tar.gz");
  std::vector<RawFile> files;
  std::vector<std::string> texts;     // folder files' contents (the archive keeps its own)
  std::vector<ListedDigest> digests;  // the folder files' lines of SHA256SUMS.txt
  Sha256Sums sums(data_dir);
  TarArchive archive;
  std::error_code ec;
  if (fs::is_directory(dir, ec)) {
    std::vector<fs::path> paths;
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.path().extension() == ".txt") paths.push_back(entry.path());
    MG_CHECK(!ec, dir.string(), ": cannot list the folder (", ec.message(), ")");
    std::sort(paths.begin(), paths.end());
    texts.resize(paths.size());
    for (size_t i = 0; i < paths.size(); ++i) {
      std::ifstream in(paths[i], std::ios::binary);
      MG_CHECK(in.good(), paths[i].string(), ": cannot open (unreadable file)");
      texts[i].assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      files.push_back({paths[i].string(), paths[i].filename().string(), texts[i]});
      digests.push_back(sums.find(paths[i].string()));
    }
  } else if (fs::is_regular_file(tgz, ec)) {
    check_listed_sha256(tgz.string(), data_dir);
    archive = read_tar_gz(tgz.string());
    for (const TarArchive::File& f : archive.files)
      if (fs::path(f.name).extension() == ".txt")
        files.push_back({tgz.string() + ":" + f.name, f.name, archive.data(f)});
    std::sort(files.begin(), files.end(),
              [](const RawFile& a, const RawFile& b) { return a.name < b.name; });
  } else {
    fail(data_dir, ": no ", name, "/ folder and no ", name,
         ".tar.gz (--data DIR must hold the PhysioNet 2012 challenge files: set-a/, "
         "set-b.tar.gz, Outcomes-a.txt, Outcomes-b.txt)");
  }
  MG_CHECK(!files.empty(), (fs::is_directory(dir, ec) ? dir : tgz).string(),
           ": no record files (<RecordID>.txt)");

  // Parse in parallel; the first error in file order is the one reported.
  const auto n = int64_t(files.size());
  std::vector<Record> records(static_cast<size_t>(n));
  std::vector<Quirks> quirks(static_cast<size_t>(n));
  std::vector<std::string> errors(static_cast<size_t>(n));
  parallel_for_each(
      n,
      [&](int64_t i) {
        const RawFile& f = files[size_t(i)];
        try {
          if (!digests.empty()) check_sha256(f.shown, f.text, digests[size_t(i)]);
          records[size_t(i)] =
              parse_record(f.text, f.shown, id_of_file(f.shown, f.name), quirks[size_t(i)]);
        } catch (const Error& e) {
          errors[size_t(i)] = e.what();
        }
      },
      16);
  for (const std::string& e : errors)
    if (!e.empty()) throw Error(e);
  for (const Quirks& q : quirks) set.quirks += q;
  std::sort(records.begin(), records.end(),
            [](const Record& a, const Record& b) { return a.id < b.id; });
  for (size_t i = 1; i < records.size(); ++i)
    MG_CHECK(records[i].id != records[i - 1].id, records[i].source, ": RecordID ", records[i].id,
             " also in ", records[i - 1].source);

  const std::string outcome_path = (fs::path(data_dir) / outcome_file).string();
  if (fs::exists(outcome_path, ec)) check_listed_sha256(outcome_path, data_dir);
  std::map<int64_t, Outcome> outcomes = read_outcomes(outcome_path);
  for (const Record& r : records) {
    auto it = outcomes.find(r.id);
    MG_CHECK(it != outcomes.end(), outcome_path, ": no outcome for record ", r.id, " (", r.source,
             ")");
    set.outcomes.push_back(it->second);
    outcomes.erase(it);
  }
  MG_CHECK(outcomes.empty(), outcome_path, ": outcome for record ", outcomes.begin()->first,
           " which ", name, " does not have (", outcomes.size(), " such records)");
  set.records = std::move(records);
  return set;
}

int64_t bin_last_values(const Record& r, int hours, int bin_minutes, std::vector<float>& out) {
  const int64_t window = int64_t(hours) * 60, steps = window / bin_minutes;
  out.assign(size_t(steps * kNumSeries), NAN);
  int64_t beyond = 0;
  // Observations are in file order, which is time order in the distributed data; in that order
  // the last value of a bin is kept (the file's last among equal times). A record out of time
  // order is put in order first (stably, so equal times keep their file order).
  std::span<const Observation> obs = r.observations;
  std::vector<Observation> sorted;
  auto by_minute = [](const Observation& a, const Observation& b) { return a.minute < b.minute; };
  if (!std::is_sorted(obs.begin(), obs.end(), by_minute)) {
    sorted.assign(obs.begin(), obs.end());
    std::stable_sort(sorted.begin(), sorted.end(), by_minute);
    obs = sorted;
  }
  for (const Observation& o : obs) {
    if (o.minute > window) {
      ++beyond;
      continue;
    }
    const int64_t bin = std::min<int64_t>(o.minute / bin_minutes, steps - 1);
    out[size_t(bin * kNumSeries + o.variable)] = o.value;
  }
  return beyond;
}

namespace {

// Median and standard deviation (population) of v; sd 1 when v is constant or empty.
struct Scale {
  double center = 0, sd = 1;
};
Scale median_sd(std::vector<double> v) {
  Scale s;
  if (v.empty()) return s;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + int64_t(mid), v.end());
  s.center = v[mid];
  if (v.size() % 2 == 0) {
    const double below = *std::max_element(v.begin(), v.begin() + int64_t(mid));
    s.center = 0.5 * (s.center + below);
  }
  double mean = 0;
  for (double x : v) mean += x;
  mean /= double(v.size());
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  var /= double(v.size());
  s.sd = var > 1e-12 ? std::sqrt(var) : 1.0;
  return s;
}

// Static values of a record, NaN when missing: Age, Height, Weight, Gender, ICUType 1..4 one-hot.
std::array<double, kStatic> static_values(const Record& r) {
  const auto& d = r.descriptor;
  std::array<double, kStatic> s = {d[kAge], d[kHeight], d[kWeightDescriptor], d[kGender], 0, 0,
                                   0,       0};
  if (!std::isnan(d[kIcuType])) s[size_t(3 + int(d[kIcuType]))] = 1;
  return s;
}
const char* const kStaticNames[kStatic] = {"Age",       "Height",    "Weight",    "Gender",
                                           "ICUType=1", "ICUType=2", "ICUType=3", "ICUType=4"};

// ---- features -------------------------------------------------------------------------------

// Sub-windows of Harutyunyan et al.: [begin, end] as fractions of the window, edges inclusive.
struct SubWindow {
  const char* name;
  double begin, end;
};
constexpr SubWindow kWindows[] = {{"all", 0, 1},       {"first10", 0, 0.1}, {"first25", 0, 0.25},
                                  {"first50", 0, 0.5}, {"last10", 0.9, 1},  {"last25", 0.75, 1},
                                  {"last50", 0.5, 1}};
const char* const kHarutyunyanStats[] = {"min", "max", "mean", "std", "skew", "count"};
const char* const kSummaryStats[] = {"first", "last", "min", "max", "mean", "count"};

// min, max, mean, std, skew (NaN when empty), count of v.
void harutyunyan_stats(const std::vector<double>& v, float* out) {
  const auto n = double(v.size());
  out[5] = float(n);
  if (v.empty()) {
    for (int k = 0; k < 5; ++k) out[k] = NAN;
    return;
  }
  double lo = v[0], hi = v[0], mean = 0;
  for (double x : v) lo = std::min(lo, x), hi = std::max(hi, x), mean += x;
  mean /= n;
  double m2 = 0, m3 = 0;
  for (double x : v) {
    const double d = x - mean;
    m2 += d * d;
    m3 += d * d * d;
  }
  m2 /= n;
  m3 /= n;
  out[0] = float(lo);
  out[1] = float(hi);
  out[2] = float(mean);
  out[3] = float(std::sqrt(m2));
  // m2 below rounding noise of the values: a constant series, skewness 0.
  out[4] = m2 > 1e-12 * std::max(1.0, mean * mean) ? float(m3 / std::pow(m2, 1.5)) : 0.0f;
}

// ---- cache of parsed sets ----------------------------------------------------------------------

// Parsed sets by data folder and the modification times of the set's folder or archive, its
// outcome file and the folder's SHA256SUMS.txt (a changed archive, outcome or checksum list is
// read again; a record edited in place in an unchanged folder is not seen until the next process).
std::shared_ptr<const ParsedSet> cached_set(const std::string& data_dir, const std::string& name,
                                            const std::string& outcome_file) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const ParsedSet>> cache;
  std::error_code ec;
  std::string key = fs::weakly_canonical(fs::path(data_dir), ec).string() + "|" + name;
  for (const fs::path& p :
       {fs::path(data_dir) / name, fs::path(data_dir) / (name + ".tar.gz"),
        fs::path(data_dir) / outcome_file, fs::path(data_dir) / "SHA256SUMS.txt"}) {
    const auto t = fs::last_write_time(p, ec);
    key += "|" + (ec ? std::string("-") : std::to_string(t.time_since_epoch().count()));
  }
  {
    std::lock_guard lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  auto set = std::make_shared<const ParsedSet>(read_set(data_dir, name, outcome_file));
  std::lock_guard lock(mutex);
  return cache.emplace(key, set).first->second;
}

void check_options(const LoadOptions& o) {
  MG_CHECK(o.hours >= 1 && o.hours <= 48, "physionet2012: hours must be in [1, 48], got ", o.hours,
           " (the records hold the first 48 hours)");
  MG_CHECK(o.bin_minutes >= 1 && (o.hours * 60) % o.bin_minutes == 0,
           "physionet2012: bin_minutes must be a whole divisor of hours * 60 = ", o.hours * 60,
           ", got ", o.bin_minutes);
  MG_CHECK(o.valid_fraction > 0 && o.test_fraction > 0 && o.valid_fraction + o.test_fraction < 0.9,
           "physionet2012: valid_fraction and test_fraction must be > 0 with a sum below 0.9, got ",
           o.valid_fraction, " and ", o.test_fraction);
  MG_CHECK(o.cv_folds == 0 || (o.cv_folds >= 2 && o.cv_folds <= 20),
           "physionet2012: cv_folds must be 0 (no cross-validation) or in [2, 20], got ",
           o.cv_folds);
  MG_CHECK(o.cv_folds == 0 ? o.cv_fold == 0 : o.cv_fold >= 0 && o.cv_fold < o.cv_folds,
           "physionet2012: cv_fold must be in [0, cv_folds) = [0, ", o.cv_folds, "), got ",
           o.cv_fold, o.cv_folds == 0 ? " (cv_fold needs cv_folds)" : "");
  MG_CHECK(o.features == "harutyunyan" || o.features == "summary",
           "physionet2012: features must be \"harutyunyan\" or \"summary\", got \"", o.features,
           "\"");
}

// K-fold cross-validation over the training and validation stays (the test split is kept
// aside): per class, the pooled stays in RecordID order get a seeded shuffle (split_seed) and
// stay k of the shuffle goes to fold k mod K, so each fold holds 1/K of each class; fold cv_fold
// validates and the other K - 1 train.
void cross_validation_fold(Data& d) {
  std::vector<int64_t> pool = d.train;
  pool.insert(pool.end(), d.valid.begin(), d.valid.end());
  std::sort(pool.begin(), pool.end());
  d.train.clear(), d.valid.clear();
  Rng rng(d.options.split_seed ^ kFoldSalt);
  for (int label = 0; label <= 1; ++label) {
    std::vector<int64_t> ids;
    for (int64_t i : pool)
      if (d.outcomes[size_t(i)]->death == label) ids.push_back(i);
    for (int64_t k = int64_t(ids.size()) - 1; k > 0; --k)
      std::swap(ids[size_t(k)], ids[size_t(rng.below(uint64_t(k + 1)))]);
    for (size_t k = 0; k < ids.size(); ++k)
      (int(k % size_t(d.options.cv_folds)) == d.options.cv_fold ? d.valid : d.train)
          .push_back(ids[k]);
  }
  std::sort(d.train.begin(), d.train.end());
  std::sort(d.valid.begin(), d.valid.end());
}

// Set-a indices split per class: shuffled with the seed, the first round(n_c * valid_fraction)
// validate, the next round(n_c * test_fraction) test, the rest train; each split by RecordID.
void split_set_a(Data& d) {
  Rng rng(d.options.split_seed ^ kSplitSalt);
  for (int label = 0; label <= 1; ++label) {
    std::vector<int64_t> ids;
    for (int64_t i = 0; i < d.set_b_begin; ++i)
      if (d.outcomes[size_t(i)]->death == label) ids.push_back(i);
    for (int64_t k = int64_t(ids.size()) - 1; k > 0; --k)
      std::swap(ids[size_t(k)], ids[size_t(rng.below(uint64_t(k + 1)))]);
    const auto nv = int64_t(std::llround(double(ids.size()) * d.options.valid_fraction));
    const auto nt = int64_t(std::llround(double(ids.size()) * d.options.test_fraction));
    for (size_t k = 0; k < ids.size(); ++k)
      (int64_t(k) < nv ? d.valid : int64_t(k) < nv + nt ? d.test : d.train).push_back(ids[k]);
  }
  for (auto* s : {&d.train, &d.valid, &d.test}) std::sort(s->begin(), s->end());
  if (d.options.cv_folds > 0) cross_validation_fold(d);
}

}  // namespace

void raw_features(const Record& r, const LoadOptions& o, float* out) {
  const int64_t window = int64_t(o.hours) * 60;
  // Values of each variable inside the window with their minutes, in time order.
  std::vector<std::vector<std::pair<int, double>>> series(kNumSeries);
  for (const Observation& ob : r.observations)
    if (ob.minute <= window) series[size_t(ob.variable)].emplace_back(ob.minute, ob.value);
  std::vector<double> v;
  float* p = out;
  for (auto& s : series) {
    std::stable_sort(s.begin(), s.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    if (o.features == "summary") {
      v.clear();
      for (const auto& [m, x] : s) v.push_back(x);
      float st[6];
      harutyunyan_stats(v, st);
      p[0] = v.empty() ? NAN : float(v.front());
      p[1] = v.empty() ? NAN : float(v.back());
      p[2] = st[0], p[3] = st[1], p[4] = st[2], p[5] = st[5];
      p += 6;
      continue;
    }
    for (const SubWindow& w : kWindows) {
      const double begin = w.begin * double(window), end = w.end * double(window);
      v.clear();
      for (const auto& [m, x] : s)
        if (m >= begin && m <= end) v.push_back(x);
      harutyunyan_stats(v, p);
      p += 6;
    }
  }
  for (double x : static_values(r)) *p++ = float(x);
}

std::vector<std::string> feature_names(const LoadOptions& o) {
  std::vector<std::string> names;
  for (const Variable& v : kSeries) {
    if (o.features == "summary") {
      for (const char* s : kSummaryStats) names.push_back(std::string(v.name) + "/" + s);
      continue;
    }
    for (const SubWindow& w : kWindows)
      for (const char* s : kHarutyunyanStats)
        names.push_back(std::string(v.name) + "/" + w.name + "/" + s);
  }
  for (const char* s : kStaticNames) names.push_back(s);
  return names;
}

Data load(const LoadOptions& o) {
  check_options(o);
  Data d;
  d.options = o;
  auto t0 = std::chrono::steady_clock::now();
  d.set_a_data = cached_set(o.data_dir, "set-a", "Outcomes-a.txt");
  d.set_b_data = cached_set(o.data_dir, "set-b", "Outcomes-b.txt");
  d.parse_seconds = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  for (const ParsedSet* s : {d.set_a_data.get(), d.set_b_data.get()}) {
    if (s == d.set_b_data.get()) d.set_b_begin = int64_t(d.records.size());
    for (size_t i = 0; i < s->records.size(); ++i) {
      d.records.push_back(&s->records[i]);
      d.outcomes.push_back(&s->outcomes[i]);
    }
  }
  const auto n = int64_t(d.records.size());
  for (int64_t i = d.set_b_begin; i < n; ++i) d.set_b.push_back(i);
  split_set_a(d);
  MG_CHECK(!d.train.empty() && !d.valid.empty() && !d.test.empty(),
           "physionet2012: set-a has too few records to split (", d.set_b_begin, ")");

  // Hourly last values of every stay.
  d.steps = int64_t(o.hours) * 60 / o.bin_minutes;
  const int64_t T = d.steps, V = kNumSeries;
  std::vector<std::vector<float>> bins(static_cast<size_t>(n));
  std::vector<int64_t> beyond(static_cast<size_t>(n));
  parallel_for_each(
      n,
      [&](int64_t i) {
        beyond[size_t(i)] =
            bin_last_values(*d.records[size_t(i)], o.hours, o.bin_minutes, bins[size_t(i)]);
      },
      64);
  d.quirks_a = d.set_a_data->quirks;
  d.quirks_b = d.set_b_data->quirks;
  for (int64_t i = 0; i < n; ++i)
    (i < d.set_b_begin ? d.quirks_a : d.quirks_b).beyond_window += beyond[size_t(i)];

  // Training statistics: per variable over the training stays' observed bins; static over the
  // training stays' known values.
  std::vector<Scale> scale(static_cast<size_t>(V));
  {
    std::vector<std::vector<double>> values(static_cast<size_t>(V));
    for (int64_t i : d.train)
      for (int64_t k = 0; k < T * V; ++k)
        if (const float x = bins[size_t(i)][size_t(k)]; !std::isnan(x))
          values[size_t(k % V)].push_back(x);
    for (int64_t v = 0; v < V; ++v) scale[size_t(v)] = median_sd(std::move(values[size_t(v)]));
  }
  std::array<Scale, 3> static_scale;  // Age, Height, Weight
  for (int k = 0; k < 3; ++k) {
    std::vector<double> values;
    for (int64_t i : d.train)
      if (const double x = static_values(*d.records[size_t(i)])[size_t(k)]; !std::isnan(x))
        values.push_back(x);
    static_scale[size_t(k)] = median_sd(std::move(values));
  }

  // Inputs.
  const bool delta = o.time_since_last;
  d.inputs = V * (delta ? 3 : 2) + kStatic;
  for (const Variable& v : kSeries) d.input_names.push_back(v.name);
  for (const Variable& v : kSeries) d.input_names.push_back(std::string(v.name) + "/mask");
  if (delta)
    for (const Variable& v : kSeries) d.input_names.push_back(std::string(v.name) + "/since_last");
  for (const char* s : kStaticNames) d.input_names.push_back(s);
  const int64_t F = d.inputs;
  d.x.assign(size_t(n * T * F), 0.0f);
  parallel_for_each(
      n,
      [&](int64_t i) {
        const std::vector<float>& b = bins[size_t(i)];
        float* x = d.x.data() + i * T * F;
        const std::array<double, kStatic> st = static_values(*d.records[size_t(i)]);
        for (int64_t v = 0; v < V; ++v) {
          float value = 0;        // the median until the first observation
          int64_t last_bin = -1;  // of the latest observation
          for (int64_t t = 0; t < T; ++t) {
            float* row = x + t * F;
            const float raw = b[size_t(t * V + v)];
            if (!std::isnan(raw)) {
              value = float((raw - scale[size_t(v)].center) / scale[size_t(v)].sd);
              last_bin = t;
              row[V + v] = 1;
            }
            row[v] = value;
            if (delta) row[2 * V + v] = float(double(t - last_bin) / double(T));
          }
        }
        for (int64_t t = 0; t < T; ++t) {
          float* s = x + t * F + (F - kStatic);
          for (int k = 0; k < 3; ++k)
            s[k] = std::isnan(st[size_t(k)])
                       ? 0.0f
                       : float((st[size_t(k)] - static_scale[size_t(k)].center) /
                               static_scale[size_t(k)].sd);
          s[3] = std::isnan(st[3]) ? 0.5f : float(st[3]);
          for (int k = 4; k < kStatic; ++k) s[k] = float(st[size_t(k)]);
        }
      },
      16);

  // Features: raw, then standardised with the training stays' mean and sd, NaN -> 0.
  d.feature_names = feature_names(o);
  const auto S = int64_t(d.feature_names.size());
  d.feature_size = S;
  d.features.assign(size_t(n * S), 0.0f);
  parallel_for_each(
      n, [&](int64_t i) { raw_features(*d.records[size_t(i)], o, d.features.data() + i * S); }, 16);
  for (int64_t k = 0; k < S; ++k) {
    double sum = 0, sq = 0;
    int64_t count = 0;
    for (int64_t i : d.train)
      if (const float x = d.features[size_t(i * S + k)]; !std::isnan(x)) sum += x, ++count;
    const double mean = count > 0 ? sum / double(count) : 0.0;
    for (int64_t i : d.train)
      if (const float x = d.features[size_t(i * S + k)]; !std::isnan(x))
        sq += (x - mean) * (x - mean);
    const double sd = count > 0 && sq / double(count) > 1e-12 ? std::sqrt(sq / double(count)) : 1;
    for (int64_t i = 0; i < n; ++i) {
      float& x = d.features[size_t(i * S + k)];
      x = std::isnan(x) ? 0.0f : float((x - mean) / sd);
    }
  }
  d.prepare_seconds = seconds_since(t0);
  return d;
}

void fill_batch(const Data& d, std::span<const int64_t> indices, DType dtype, Batch& batch) {
  const auto B = int64_t(indices.size());
  MG_CHECK(B >= 1, "physionet2012: empty batch");
  const int64_t T = d.steps, F = d.inputs, S = d.feature_size;
  Tensor& x = batch.field("x", Shape{B, T, F}, dtype);
  Tensor& features = batch.field("features", Shape{B, S}, dtype);
  Tensor& y = batch.field("y", Shape{B, 1}, dtype);
  Tensor& ids = batch.field("record_id", Shape{B}, dtype);
  const auto n = int64_t(d.records.size());
  MG_DISPATCH(dtype, E, {
    E* px = x.data<E>();
    E* pf = features.data<E>();
    for (int64_t s = 0; s < B; ++s) {
      const int64_t i = indices[size_t(s)];
      MG_CHECK(i >= 0 && i < n, "physionet2012: stay ", i, " out of range");
      std::copy_n(d.x.data() + i * T * F, T * F, px + s * T * F);
      std::copy_n(d.features.data() + i * S, S, pf + s * S);
      y.set(s, d.outcomes[size_t(i)]->death);
      ids.set(s, double(d.records[size_t(i)]->id));
    }
  });
  batch.size = B;
}

}  // namespace memgrad::physionet
