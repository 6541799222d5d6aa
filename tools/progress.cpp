#include "tools/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace memgrad::cli {

Progress::Progress(int64_t start, int64_t total, int64_t line_every, bool quiet)
    : start_(start),
      total_(total),
      line_every_(line_every > 0 ? line_every : 100),
      quiet_(quiet),
      tty_(::isatty(2) != 0),
      t0_(std::chrono::steady_clock::now()),
      last_draw_(t0_),
      last_done_(start) {}

double Progress::steps_per_second() const {
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  return s > 0 ? double(last_done_ - start_) / s : 0.0;
}

std::string Progress::eta(int64_t done) const {
  const double rate = steps_per_second();
  if (rate <= 0) return "?";
  const long s = long(double(total_ - done) / rate);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, (s / 60) % 60);
  else
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  return buf;
}

void Progress::update(int64_t done, const std::string& status) {
  last_done_ = done;
  if (quiet_) return;
  const auto now = std::chrono::steady_clock::now();
  if (tty_) {
    // Redraw at most 10 times a second.
    if (done < total_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    constexpr int kWidth = 28;
    const int filled = int(double(done) / double(total_) * kWidth);
    std::string bar(size_t(filled), '#');
    bar.append(size_t(kWidth - filled), '.');
    std::fprintf(stderr, "\r[%s] %lld/%lld  %s  %.1f steps/s  ETA %s   ", bar.c_str(),
                 (long long)done, (long long)total_, status.c_str(), steps_per_second(),
                 eta(done).c_str());
    std::fflush(stderr);
  } else if (done % line_every_ == 0 || done == total_) {
    std::fprintf(stderr, "step %lld/%lld  %s  %.1f steps/s  ETA %s\n", (long long)done,
                 (long long)total_, status.c_str(), steps_per_second(), eta(done).c_str());
  }
}

void Progress::finish() {
  if (tty_ && !quiet_) std::fprintf(stderr, "\n");
}

}  // namespace memgrad::cli
