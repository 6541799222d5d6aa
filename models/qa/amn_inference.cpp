// The AMN's inference measurements; see models/qa/amn_inference.hpp.
#include "models/qa/amn_inference.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "engine/tensor.hpp"

namespace memgrad::qa::amn {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kRepeats = 5;
double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// How many times faster `part` is than `all` (0 when part took no time).
double speedup(double all, double part) { return part > 0 ? all / part : 0.0; }

}  // namespace

void InferenceStats::reset(int64_t banks) {
  banks_ = banks;
  questions_ = 0;
  created_ = entities_ = 0;
  for (auto* v : {&right_, &examined_, &read_s_, &decode_s_, &banks_read_})
    v->assign(size_t(banks), 0.0);
}

void InferenceStats::add(const FinalState& f) {
  const int64_t b = f.w.shape()[0], v = f.w.shape()[1], d = f.w.shape()[2];
  const int64_t l = f.banks.shape()[1];
  if (banks_ != l) reset(l);
  scores_.resize(size_t(v));
  g_.resize(size_t(d));
  y_.resize(size_t(d));
  logits_.resize(size_t(v));
  members_.resize(size_t(v));
  MG_DISPATCH(f.w.dtype(), T, {
    const T *w = f.w.data<T>(), *str = f.s.data<T>(), *q = f.q.data<T>();
    const T *banks = f.banks.data<T>(), *exists = f.exists.data<T>();
    const T *h = f.h.data<T>(), *slope = f.out_prelu.data<T>(), *r = f.r.data<T>();
    for (int64_t s = 0; s < b; ++s) {
      int64_t last = 0, seen = 0;
      for (int64_t m = 0; m < l; ++m)
        if (exists[s * l + m] >= T(0.5)) last = m;
      // The story's entities: those in any bank (m_0 holds them all unless entities migrate).
      for (int64_t e = 0; e < v; ++e) {
        bool held = false;
        for (int64_t m = 0; m < l; ++m) held = held || banks[(s * l + m) * v + e] >= T(0.5);
        seen += held;
      }
      created_ += double(last + 1);
      entities_ += double(seen);
      ++questions_;
      const T* qs = q + s * d;
      for (int64_t k = 1; k <= l; ++k) {
        int64_t examined = 0, read = 0, best = 0;
        // (16)-(18) over the last k existing banks' members only.
        const auto read_banks = [&] {
          std::fill(g_.begin(), g_.end(), 0.0);
          double weight_sum = 0;
          examined = read = 0;
          for (int64_t m = std::max<int64_t>(0, last - k + 1); m <= last; ++m) {
            if (exists[s * l + m] < T(0.5)) continue;
            const T* row = banks + (s * l + m) * v;
            int64_t n = 0;
            for (int64_t e = 0; e < v; ++e)
              if (row[e] >= T(0.5)) members_[size_t(n++)] = int32_t(e);
            if (n == 0) continue;
            examined += n;
            ++read;
            double mx = -1e300;
            for (int64_t i = 0; i < n; ++i) {
              const int64_t e = members_[size_t(i)];
              const T* we = w + (s * v + e) * d;
              double dot = 0;
              for (int64_t x = 0; x < d; ++x) dot += double(we[x]) * double(qs[x]);
              scores_[size_t(i)] = double(str[s * v + e]) * dot;  // <C_e, q>, C_e = s_e w_e
              mx = std::max(mx, scores_[size_t(i)]);
            }
            double z = 0;
            for (int64_t i = 0; i < n; ++i)
              z += scores_[size_t(i)] = std::exp(scores_[size_t(i)] - mx);
            const double dm =
                (1.0 - std::pow(1e-3, double(n))) * std::exp(f.temperature * double(m));
            weight_sum += dm;
            for (int64_t i = 0; i < n; ++i) {
              const int64_t e = members_[size_t(i)];
              const double a = dm * scores_[size_t(i)] / z * double(str[s * v + e]);
              const T* we = w + (s * v + e) * d;
              for (int64_t x = 0; x < d; ++x) g_[size_t(x)] += a * double(we[x]);
            }
          }
          if (weight_sum > 0)
            for (double& x : g_) x /= weight_sum;
        };
        // (19) logits = PReLU(g H + q) R; the answer is the argmax. A row of H and of R at a
        // time, so that the inner loops run over contiguous memory (the compiler vectorises
        // them); each sum adds its terms in the same order as a column-by-column loop would.
        const auto output = [&] {
          for (int64_t x = 0; x < d; ++x) y_[size_t(x)] = double(qs[x]);
          for (int64_t y = 0; y < d; ++y) {
            const double gy = g_[size_t(y)];
            const T* row = h + y * d;
            for (int64_t x = 0; x < d; ++x) y_[size_t(x)] += gy * double(row[x]);
          }
          for (int64_t x = 0; x < d; ++x)
            if (y_[size_t(x)] <= 0) y_[size_t(x)] *= double(slope[x]);
          std::fill(logits_.begin(), logits_.end(), 0.0);
          for (int64_t x = 0; x < d; ++x) {
            const double yx = y_[size_t(x)];
            const T* row = r + x * v;
            for (int64_t c = 0; c < v; ++c) logits_[size_t(c)] += yx * double(row[c]);
          }
          best = 0;
          for (int64_t c = 1; c < v; ++c)
            if (logits_[size_t(c)] > logits_[size_t(best)]) best = c;
        };
        // The fastest of kRepeats runs: a run the scheduler interrupted is not the decode's time.
        double t_read = 1e300, t_all = 1e300;
        for (int rep = 0; rep < kRepeats; ++rep) {
          const auto t0 = Clock::now();
          read_banks();
          const auto t1 = Clock::now();
          output();
          const auto t2 = Clock::now();
          t_read = std::min(t_read, seconds(t0, t1));
          t_all = std::min(t_all, seconds(t0, t2));
        }
        const size_t ki = size_t(k - 1);
        right_[ki] += double(best) == f.answer.at(s);
        examined_[ki] += seen > 0 ? double(examined) / double(seen) : 0.0;
        banks_read_[ki] += double(read);
        read_s_[ki] += t_read;
        decode_s_[ki] += t_all;
      }
    }
  });
}

nlohmann::json passing_banks(const nlohmann::json& per_k, double pass_line) {
  if (per_k.empty()) return nullptr;
  const nlohmann::json& all = per_k.back();
  for (const nlohmann::json& row : per_k) {
    const double error = row.at("error").get<double>();
    if (error > pass_line) continue;  // bAbI fails a task above the line
    return {
        {"banks", row.at("k")},
        {"error", error},
        {"entity_ratio", row.at("entity_ratio")},
        {"speedup_read", speedup(all.at("read_ms").get<double>(), row.at("read_ms").get<double>())},
        {"speedup_decode",
         speedup(all.at("decode_ms").get<double>(), row.at("decode_ms").get<double>())}};
  }
  return nullptr;
}

nlohmann::json InferenceStats::json() const {
  const double n = double(std::max<int64_t>(questions_, 1));
  nlohmann::json per_k = nlohmann::json::array();
  const size_t all = size_t(std::max<int64_t>(banks_ - 1, 0));
  int64_t required = banks_;
  for (int64_t k = banks_; k >= 1; --k) {
    const size_t i = size_t(k - 1);
    if (100.0 * (1.0 - right_[i] / n) <= 100.0 * (1.0 - right_[all] / n) + 1.0) required = k;
  }
  for (int64_t k = 1; k <= banks_; ++k) {
    const size_t i = size_t(k - 1);
    per_k.push_back({{"k", k},
                     {"error", 100.0 * (1.0 - right_[i] / n)},
                     {"entity_ratio", examined_[i] / n},
                     {"banks_read", banks_read_[i] / n},
                     {"read_ms", 1e3 * read_s_[i]},
                     {"decode_ms", 1e3 * decode_s_[i]}});
  }
  const size_t r = size_t(std::max<int64_t>(required - 1, 0));
  return {{"questions", questions_},
          {"banks_created", created_ / n},
          {"entities", entities_ / n},
          {"per_k", per_k},
          {"required_banks", required},
          {"speedup_read", banks_ ? speedup(read_s_[all], read_s_[r]) : 0.0},
          {"speedup_decode", banks_ ? speedup(decode_s_[all], decode_s_[r]) : 0.0},
          {"pass_line", kPassLine},
          {"passing", passing_banks(per_k, kPassLine)},
          {"definition",
           "decoded again outside the tape from the last k existing banks (k = 1..max_banks; "
           "k = max_banks = all): error (%), entity_ratio = entities read (summed over the banks "
           "read) / distinct story entities, read_ms = Eqs. 16-18 (bank attention) and "
           "decode_ms = Eqs. 16-19 summed over the questions (each the fastest of 5 runs), one "
           "thread; required_banks = the "
           "smallest k with error within 1 point of all banks'; speedups = all banks' time / "
           "required banks' time; passing = the smallest k with error at most pass_line (%, "
           "bAbI fails a task above it), its error, ratio and speedups (null: no k passes)"}};
}

}  // namespace memgrad::qa::amn
