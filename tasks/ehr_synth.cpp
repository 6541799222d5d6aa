// The synthetic MIMIC-format EHR (see ehr_synth.hpp).
#include "tasks/ehr_synth.hpp"

#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <type_traits>

#include "engine/error.hpp"
#include "engine/json_text.hpp"
#include "engine/rng.hpp"
#include "tasks/metrics.hpp"

namespace memgrad::ehr_synth {
namespace {

namespace fs = std::filesystem;

// Concatenation piece by piece (g++ 12 warns falsely, -Wrestrict, on "literal" + std::string).
void put(std::string& s, std::string_view x) { s += x; }
template <class T>
requires std::is_integral_v<T>
void put(std::string& s, T v) { s += std::to_string(v); }
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string s;
  (put(s, parts), ...);
  return s;
}

// Rule drug d has type d % kCycle; with Options::either_drugs the base drugs become kEither.
enum Rule { kDx, kProc, kAnd, kPriority, kHistory, kBase, kEither, kRuleTypes };
constexpr int kCycle = kEither;
const char* kRuleNames[kRuleTypes] = {"dx", "proc", "and", "priority", "history", "base", "either"};
constexpr double kFired = 0.9, kNoise = 0.01;

// A table file written through zlib: compressed (.csv.gz) or plain ("wT": zlib's transparent
// write), one buffered stream either way.
class Table {
 public:
  Table(const fs::path& dir, const char* name, bool gz, const char* header) {
    path_ = (dir / (std::string(name) + (gz ? ".csv.gz" : ".csv"))).string();
    gz_ = gzopen(path_.c_str(), gz ? "wb6" : "wT");
    MG_CHECK(gz_ != nullptr, path_, ": cannot create (", std::strerror(errno), ")");
    gzbuffer(gz_, 1 << 17);
    write(header);
  }
  ~Table() {
    if (gz_) gzclose(gz_);
  }
  void write(const std::string& line) {
    MG_CHECK(gzwrite(gz_, line.data(), unsigned(line.size())) == int(line.size()), path_,
             ": write failed");
  }
  void close() {
    const int status = gzclose(gz_);
    gz_ = nullptr;
    MG_CHECK(status == Z_OK, path_, ": write failed when closing");
  }

 private:
  std::string path_;
  gzFile gz_ = nullptr;
};

// Draws ranks 0..n-1 with P(r) proportional to (r + 1)^-s.
class Zipf {
 public:
  Zipf(int64_t n, double s) : cdf_(size_t(n)) {
    double total = 0;
    for (int64_t r = 0; r < n; ++r) cdf_[size_t(r)] = total += std::pow(double(r + 1), -s);
    for (double& c : cdf_) c /= total;
  }
  int32_t draw(Rng& rng) const {
    const auto it = std::lower_bound(cdf_.begin(), cdf_.end(), rng.uniform());
    return int32_t(std::min<ptrdiff_t>(it - cdf_.begin(), ptrdiff_t(cdf_.size()) - 1));
  }

 private:
  std::vector<double> cdf_;
};

int poisson(Rng& rng, double mean) {  // Knuth's method: the means here are small
  const double limit = std::exp(-mean);
  int k = 0;
  for (double p = rng.uniform(); p > limit; p *= rng.uniform()) ++k;
  return k;
}

// `count` distinct codes drawn by `zipf`, in drawn order.
void draw_codes(Rng& rng, const Zipf& zipf, int count, std::vector<int32_t>& out) {
  out.clear();
  while (int(out.size()) < count) {
    const int32_t c = zipf.draw(rng);
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
}

struct DrugRule {
  Rule type = kBase;
  std::vector<int32_t> dx, proc;  // the sets S and T
  double base = 0;                // kBase: the probability
};

// `k` distinct codes among the `top` most frequent (ranks 0..top-1).
std::vector<int32_t> code_set(Rng& rng, int k, int64_t top) {
  std::vector<int32_t> s;
  while (int(s.size()) < k) {
    const int32_t c = int32_t(rng.below(uint64_t(top)));
    if (std::find(s.begin(), s.end(), c) == s.end()) s.push_back(c);
  }
  return s;
}

bool any_in(const std::vector<int32_t>& codes, const std::vector<int32_t>& set,
            size_t first = SIZE_MAX) {
  const size_t n = std::min(first, codes.size());
  for (size_t i = 0; i < n; ++i)
    if (std::find(set.begin(), set.end(), codes[i]) != set.end()) return true;
  return false;
}

// The oracle: drug `d`'s probability given the admission's codes and the patient's earlier
// diagnoses (`seen_dx`: a flag per diagnosis code).
double oracle(const DrugRule& r, const std::vector<int32_t>& dx, const std::vector<int32_t>& proc,
              const std::vector<uint8_t>& seen_dx) {
  bool fired = false;
  switch (r.type) {
    case kDx:
      fired = any_in(dx, r.dx);
      break;
    case kProc:
      fired = any_in(proc, r.proc);
      break;
    case kAnd:
      fired = any_in(dx, r.dx) && any_in(proc, r.proc);
      break;
    case kEither:  // one view's code but not both: no sum of per-code weights ranks this
      fired = any_in(dx, r.dx) != any_in(proc, r.proc);
      break;
    case kPriority:
      fired = any_in(dx, r.dx, 3);
      break;
    case kHistory:
      for (int32_t c : r.dx) fired = fired || seen_dx[size_t(c)];
      break;
    default:
      return r.base;
  }
  return fired ? kFired : kNoise;
}

std::string two(int v) { return cat(v < 10 ? "0" : "", v); }

// "YYYY-MM-DD HH:MM:SS" of a day count from 1970-01-01 and a minute of the day.
std::string time_text(int64_t days, int minute) {
  const std::chrono::year_month_day ymd{std::chrono::sys_days(std::chrono::days(days))};
  return cat(int(ymd.year()), "-", two(int(unsigned(ymd.month()))), "-",
             two(int(unsigned(ymd.day()))), " ", two(minute / 60), ":", two(minute % 60), ":00");
}

void check_options(const Options& o) {
  MG_CHECK(o.patients >= 1 && o.patients <= 10'000'000,
           "ehr-gen: patients must be in [1, 1e7], got ", o.patients);
  MG_CHECK(o.extra_admission >= 0 && o.extra_admission < 0.95,
           "ehr-gen: extra_admission must be in [0, 0.95), got ", o.extra_admission);
  MG_CHECK(o.dx_codes >= 400 && o.proc_codes >= 200, "ehr-gen: at least 400 diagnosis and 200 ",
           "procedure codes (the rules draw from the top 400 / 200), got ", o.dx_codes, " and ",
           o.proc_codes);
  MG_CHECK(o.rule_drugs >= 6 && o.tail_drugs >= 0, "ehr-gen: at least 6 rule drugs, got ",
           o.rule_drugs);
  MG_CHECK(o.dx_mean >= 1 && o.dx_mean <= 39 && o.proc_mean >= 1 && o.proc_mean <= 40,
           "ehr-gen: dx_mean must be in [1, 39] and proc_mean in [1, 40]");
  MG_CHECK(o.zipf_exponent > 0 && o.zipf_exponent <= 3, "ehr-gen: zipf_exponent must be in (0, 3]");
  MG_CHECK(o.follow_pairs >= 0 && o.follow_pairs <= 40,
           "ehr-gen: follow_pairs must be in [0, 40], got ", o.follow_pairs);
}

}  // namespace

Summary generate(const Options& o, const std::string& dir, bool overwrite) {
  check_options(o);
  const auto start = std::chrono::steady_clock::now();
  std::error_code ec;
  MG_CHECK(overwrite || !fs::exists(dir, ec), dir,
           ": exists (choose another folder, or --overwrite)");
  const fs::path partial = dir + ".partial";
  fs::remove_all(partial, ec);
  fs::create_directories(partial, ec);
  MG_CHECK(!ec, partial.string(), ": cannot create (", ec.message(), ")");

  Rng rng(o.seed, 0x5e1f);
  // The either drugs' code sets come from a generator of their own, so that every other draw
  // (codes, drugs, times) is the same with and without the option.
  Rng either_rng(o.seed, 0xe17e);
  std::vector<DrugRule> rules(size_t(o.rule_drugs));
  nlohmann::json rules_json = nlohmann::json::array();
  for (int64_t d = 0; d < o.rule_drugs; ++d) {
    DrugRule& r = rules[size_t(d)];
    r.type = Rule(d % kCycle);
    switch (r.type) {
      case kDx:
        r.dx = code_set(rng, 2, 400);
        break;
      case kProc:
        r.proc = code_set(rng, 2, 200);
        break;
      case kAnd:
        r.dx = code_set(rng, 3, 60), r.proc = code_set(rng, 2, 30);
        break;
      case kPriority:
      case kHistory:
        r.dx = code_set(rng, 3, 200);
        break;
      default:
        r.base = rng.uniform(0.05, 0.6);
        if (o.either_drugs) {
          r.type = kEither;
          // Common codes, so that "both" is as frequent as "one of them" (ranks 4-20: each
          // diagnosis in 6-27 % of admissions; 2-8: each procedure in 6-23 %): a score adding
          // per-code weights then ranks either drugs near 0.7 against the oracle's 0.95.
          r.dx = code_set(either_rng, 4, 17), r.proc = code_set(either_rng, 3, 7);
          for (int32_t& c : r.dx) c += 3;
          for (int32_t& c : r.proc) c += 1;
        }
    }
    nlohmann::json j = {{"drug", cat("R", d)}, {"type", kRuleNames[r.type]}};
    nlohmann::json dx = nlohmann::json::array(), proc = nlohmann::json::array();
    for (int32_t c : r.dx) dx.push_back(cat("D", c));
    for (int32_t c : r.proc) proc.push_back(cat("P", c));
    if (!r.dx.empty()) j["dx"] = dx;
    if (!r.proc.empty()) j["proc"] = proc;
    if (r.type == kBase) j["probability"] = r.base;
    rules_json.push_back(j);
  }
  std::vector<double> tail(size_t(o.tail_drugs));
  for (double& p : tail) p = rng.uniform(0.001, 0.005);

  const Zipf dx_zipf(o.dx_codes, o.zipf_exponent), proc_zipf(o.proc_codes, o.zipf_exponent);
  Table admissions(partial, "ADMISSIONS", o.gzip,
                   "\"ROW_ID\",\"SUBJECT_ID\",\"HADM_ID\",\"ADMITTIME\",\"DISCHTIME\","
                   "\"ADMISSION_TYPE\"\n");
  Table diagnoses(partial, "DIAGNOSES_ICD", o.gzip,
                  "\"ROW_ID\",\"SUBJECT_ID\",\"HADM_ID\",\"SEQ_NUM\",\"ICD9_CODE\"\n");
  Table procedures(partial, "PROCEDURES_ICD", o.gzip,
                   "\"ROW_ID\",\"SUBJECT_ID\",\"HADM_ID\",\"SEQ_NUM\",\"ICD9_CODE\"\n");
  Table prescriptions(partial, "PRESCRIPTIONS", o.gzip,
                      "\"ROW_ID\",\"SUBJECT_ID\",\"HADM_ID\",\"DRUG\",\"FORMULARY_DRUG_CD\","
                      "\"ROUTE\"\n");

  // Diagnosis pairs A -> B two admissions later, from a generator of their own (follow_pairs).
  Rng follow_rng(o.seed, 0xf011);
  std::vector<std::pair<int32_t, int32_t>> follow;
  {
    const std::vector<int32_t> a = code_set(follow_rng, int(o.follow_pairs), 40),
                               b = code_set(follow_rng, int(o.follow_pairs), 200);
    for (int64_t j = 0; j < o.follow_pairs; ++j)
      follow.emplace_back(a[size_t(j)], 200 + b[size_t(j)]);
  }
  std::vector<int32_t> before_previous, previous;  // the patient's admissions a-2 and a-1

  Summary s;
  // The ceiling sample: the oracle's probabilities and the drawn labels of every sixth patient.
  metrics::LabelMatrix sample_labels;
  metrics::ScoreMatrix sample_scores;
  std::vector<int32_t> dx, proc;
  std::vector<uint8_t> seen_dx(size_t(o.dx_codes)), seen_next(size_t(o.dx_codes));
  std::vector<int> labels(size_t(o.rule_drugs));
  std::vector<double> probs(size_t(o.rule_drugs));
  int64_t row = 1, hadm = 100000;
  // A drug's 1-3 prescription rows, drawn from `g`; with write false only the draws are made.
  auto prescribe = [&](Rng& g, const std::string& subject, const std::string& id,
                       const std::string& code, bool write = true) {
    const int times = 1 + int(g.below(3));
    for (int k = 0; k < times; ++k) {
      const char* route = g.uniform() < 0.01 ? "" : "\"PO\"";  // MIMIC: some without a route
      if (!write) continue;
      prescriptions.write(
          cat(row++, ",", subject, ",", id, ",\"drug ", code, "\",\"", code, "\",", route, "\n"));
      ++s.drug_rows;
    }
  };
  for (int64_t p = 0; p < o.patients; ++p) {
    const std::string subject = cat(10000 + p);
    std::fill(seen_dx.begin(), seen_dx.end(), 0);
    before_previous.clear(), previous.clear();
    int64_t day =
        int64_t(std::chrono::sys_days(std::chrono::year(2100) / 1 / 1).time_since_epoch().count()) +
        int64_t(rng.below(365 * 99));
    const bool in_sample = p % 6 == 5;
    for (bool more = true; more; more = rng.uniform() < o.extra_admission) {
      const std::string id = cat(hadm++);
      const int minute = int(rng.below(24 * 60));
      admissions.write(cat(row++, ",", subject, ",", id, ",", time_text(day, minute), ",",
                           time_text(day + 1 + int64_t(rng.below(20)), minute),
                           ",\"EMERGENCY\"\n"));
      ++s.admissions;
      draw_codes(rng, dx_zipf, std::min(39, 1 + poisson(rng, o.dx_mean - 1)), dx);
      draw_codes(rng, proc_zipf, std::min(40, 1 + poisson(rng, o.proc_mean - 1)), proc);
      for (const auto& [a, b] : follow)
        if (std::find(before_previous.begin(), before_previous.end(), a) != before_previous.end() &&
            follow_rng.uniform() < 0.9 && std::find(dx.begin(), dx.end(), b) == dx.end())
          dx.push_back(b);
      before_previous.swap(previous);
      previous = dx;
      for (size_t i = 0; i < dx.size(); ++i) {
        diagnoses.write(cat(row++, ",", subject, ",", id, ",", i + 1, ",\"D", dx[i], "\"\n"));
        ++s.dx_rows;
      }
      if (rng.uniform() < 0.001) {
        diagnoses.write(cat(row++, ",", subject, ",", id, ",,\n"));
        ++s.dx_rows;
      }
      for (size_t i = 0; i < proc.size(); ++i) {
        procedures.write(cat(row++, ",", subject, ",", id, ",", i + 1, ",\"P", proc[i], "\"\n"));
        ++s.proc_rows;
      }
      for (int64_t d = 0; d < o.rule_drugs; ++d) {
        const DrugRule& r = rules[size_t(d)];
        Rng* g = &rng;
        if (r.type == kEither) {
          // The base drug's draws, made and dropped, keep the main generator where it is
          // without the option; the either drug draws from its own.
          if (rng.uniform() < r.base) prescribe(rng, subject, id, "", false);
          g = &either_rng;
        }
        probs[size_t(d)] = oracle(r, dx, proc, seen_dx);
        labels[size_t(d)] = g->uniform() < probs[size_t(d)];
        if (labels[size_t(d)]) prescribe(*g, subject, id, cat("R", d));
      }
      for (size_t t = 0; t < tail.size(); ++t)
        if (rng.uniform() < tail[t]) prescribe(rng, subject, id, cat("T", t));
      if (in_sample) {
        sample_labels.push_back(labels);
        sample_scores.push_back(probs);
      }
      for (int32_t c : dx) seen_dx[size_t(c)] = 1;  // history for the next admission
      day += 30 + int64_t(rng.below(971));
    }
    ++s.patients;
  }
  admissions.close();
  diagnoses.close();
  procedures.close();
  prescriptions.close();

  // The oracle's metrics on the sample, and its macro AUC per rule type.
  if (!sample_labels.empty()) {
    const metrics::MultiLabelReport r = metrics::evaluate_multilabel(sample_labels, sample_scores);
    nlohmann::json c = {{"admissions", sample_labels.size()},
                        {"auc_macro", r.auc_macro.value_or(NAN)},
                        {"auc_micro", r.auc_micro.value_or(NAN)}};
    for (const metrics::AtK& a : r.at_k) c[cat("p_at_", a.k)] = a.precision.value_or(NAN);
    for (int t = 0; t < kRuleTypes; ++t) {
      double sum = 0;
      int n = 0, drugs = 0;
      for (int64_t d = 0; d < o.rule_drugs; ++d) {
        if (rules[size_t(d)].type != t) continue;
        ++drugs;
        if (r.auc_per_label[size_t(d)]) sum += *r.auc_per_label[size_t(d)], ++n;
      }
      if (drugs > 0) c[cat("auc_macro_", kRuleNames[t])] = n ? sum / n : NAN;
    }
    c["definition"] =
        "the oracle (each drug's true probability given the codes and the patient's earlier "
        "diagnoses) scored on the admissions of every sixth patient, over the rule drugs; "
        "auc_macro_<type>: over the drugs of one rule type (base-rate drugs: 0.5 by construction)";
    s.ceiling = c;
  }
  nlohmann::json rules_out = {{"seed", o.seed}, {"drugs", rules_json}};
  if (o.follow_pairs > 0) {
    nlohmann::json f = nlohmann::json::array();
    for (const auto& [a, b] : follow)
      f.push_back({{"trigger", cat("D", a)}, {"follows", cat("D", b)}});
    rules_out["follow"] = {{"pairs", f},
                           {"rule",
                            "trigger in admission a-2 gives follows in admission a with "
                            "probability 0.9"}};
  }
  std::ofstream(partial / "rules.json") << dump_json(rules_out, 1) << "\n";
  std::ofstream(partial / "ceiling.json") << dump_json(s.ceiling, 2) << "\n";
  fs::remove_all(dir, ec);
  fs::rename(partial, dir, ec);
  MG_CHECK(!ec, dir, ": cannot rename ", partial.string(), " into place (", ec.message(), ")");
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return s;
}

namespace {

// `read` applied to the rules.json of `dir` (nothing when there is none); a parse or shape error
// names the file.
template <class T, class Read>
std::vector<T> read_rules(const std::string& dir, Read read) {
  const fs::path path = fs::path(dir) / "rules.json";
  std::ifstream in(path);
  if (!in) return {};
  std::vector<T> out;
  try {
    read(parse_json(in), out);
  } catch (const nlohmann::json::exception& e) {
    fail(path.string(), ": not the rules.json of `memgrad ehr-gen` (", e.what(), ")");
  }
  return out;
}

}  // namespace

std::vector<FollowPair> read_follow_pairs(const std::string& dir) {
  return read_rules<FollowPair>(dir, [](const nlohmann::json& rules, std::vector<FollowPair>& out) {
    if (!rules.contains("follow")) return;
    for (const nlohmann::json& p : rules.at("follow").at("pairs"))
      out.push_back({p.at("trigger").get<std::string>(), p.at("follows").get<std::string>()});
  });
}

std::vector<DrugRuleType> read_drug_rules(const std::string& dir) {
  return read_rules<DrugRuleType>(
      dir, [](const nlohmann::json& rules, std::vector<DrugRuleType>& out) {
        for (const nlohmann::json& d : rules.at("drugs"))
          out.push_back({d.at("drug").get<std::string>(), d.at("type").get<std::string>()});
      });
}

}  // namespace memgrad::ehr_synth
