// Progress of long work: a one-line bar redrawn in place on a terminal, plain periodic lines
// otherwise (logs, CI), both on stderr so stdout stays machine-readable.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace memgrad::cli {

class Progress {
 public:
  Progress(int64_t start, int64_t total, int64_t line_every, bool quiet);
  // Reports that `done` of `total` are done; `status` is e.g. "loss 1.234".
  void update(int64_t done, const std::string& status);
  void finish();
  double steps_per_second() const;

 private:
  std::string eta(int64_t done) const;
  int64_t start_, total_, line_every_;
  bool quiet_, tty_;
  std::chrono::steady_clock::time_point t0_, last_draw_;
  int64_t last_done_ = 0;
};

}  // namespace memgrad::cli
