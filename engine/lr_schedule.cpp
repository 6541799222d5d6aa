#include "engine/lr_schedule.hpp"

#include <algorithm>
#include <cmath>

namespace memgrad {

double scheduled_lr(const LrSchedule& s, int64_t step) {
  const int64_t epoch = step / std::max<int64_t>(1, s.steps_per_epoch);
  double lr = s.lr;
  if (s.cycle_epochs > 0) {
    // Cycling lets a run on a plateau take large steps again after each low point.
    const int64_t period = s.cycle_epochs * std::max<int64_t>(1, s.steps_per_epoch);
    const double u = double(step % period) / double(period);
    lr = s.cycle_min + (s.lr - s.cycle_min) * (1.0 - std::abs(1.0 - 2.0 * u));
  }
  if (s.halve_every_epochs > 0) lr *= std::pow(0.5, double(epoch / s.halve_every_epochs));
  // Linear decay from decay_start (0: none) to lr * decay_final at the last step: a constant rate
  // leaves the final parameters wherever the last noisy steps put them.
  if (s.decay_start > 0 && step >= s.decay_start && s.total_steps > s.decay_start) {
    const double t = double(step - s.decay_start) / double(s.total_steps - s.decay_start);
    lr *= 1.0 - (1.0 - s.decay_final) * std::min(1.0, t);
  }
  return lr;
}

}  // namespace memgrad
