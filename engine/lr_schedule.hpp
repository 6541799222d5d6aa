// The learning rate of a training step: the recipe's lr shaped by up to three schedules, each off
// at its zero setting. A pure function, so that a test can walk every step of a schedule.
#pragma once

#include <cstdint>

namespace memgrad {

struct LrSchedule {
  double lr = 1e-3;                // the recipe's rate (the cycle's peak)
  int64_t steps_per_epoch = 1;     // updates an epoch
  int64_t total_steps = 0;         // the run's number of updates (for the linear decay)
  int64_t halve_every_epochs = 0;  // x 0.5 every H epochs (EntNet's and MemN2N's recipes)
  int64_t decay_start = 0;         // linear decay from this step to lr * decay_final at the end
  double decay_final = 0.1;
  int64_t cycle_epochs = 0;  // triangular cycles of C epochs between cycle_min and lr (Smith 2017)
  double cycle_min = 0.0;
};

// lr(step), step counted from 0:
//   [cycle_min + (lr - cycle_min) tri(step)] * 0.5^floor(epoch / H) * decay(step)
// tri(step) = 1 - |1 - 2 u|, u = the step's position in its cycle in [0, 1): each cycle starts at
// cycle_min, peaks at lr half-way, and falls back (tri = 1 without cycles).
double scheduled_lr(const LrSchedule& s, int64_t step);

}  // namespace memgrad
