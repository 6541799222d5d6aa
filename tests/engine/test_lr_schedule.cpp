#include <doctest/doctest.h>

#include <initializer_list>

#include "engine/lr_schedule.hpp"

using namespace memgrad;

TEST_CASE("lr schedule: every schedule off gives the recipe's rate") {
  LrSchedule s;
  s.lr = 0.01;
  s.steps_per_epoch = 7;
  s.total_steps = 700;
  for (int64_t step : {0, 1, 6, 7, 699}) CHECK(scheduled_lr(s, step) == 0.01);
}

TEST_CASE("lr schedule: halving every H epochs, counted in whole epochs") {
  LrSchedule s;
  s.lr = 0.01;
  s.steps_per_epoch = 10;
  s.halve_every_epochs = 25;  // EntNet's recipe
  CHECK(scheduled_lr(s, 249) == 0.01);
  CHECK(scheduled_lr(s, 250) == 0.005);
  CHECK(scheduled_lr(s, 499) == 0.005);
  CHECK(scheduled_lr(s, 500) == 0.0025);
}

TEST_CASE("lr schedule: linear decay from decay_start to lr * decay_final at the last step") {
  LrSchedule s;
  s.lr = 1.0;
  s.total_steps = 100;
  s.decay_start = 50;
  s.decay_final = 0.1;
  CHECK(scheduled_lr(s, 49) == 1.0);
  CHECK(scheduled_lr(s, 50) == 1.0);
  CHECK(scheduled_lr(s, 75) == doctest::Approx(0.55));
  CHECK(scheduled_lr(s, 100) == doctest::Approx(0.1));
  CHECK(scheduled_lr(s, 150) == doctest::Approx(0.1));  // past the end it stays at the floor
}

TEST_CASE("lr schedule: triangular cycles start low, peak half-way, and repeat") {
  LrSchedule s;
  s.lr = 0.01;
  s.cycle_min = 0.0002;
  s.steps_per_epoch = 5;
  s.cycle_epochs = 4;  // 20 steps a cycle
  CHECK(scheduled_lr(s, 0) == doctest::Approx(0.0002));
  CHECK(scheduled_lr(s, 5) == doctest::Approx(0.0002 + 0.0098 * 0.5));
  CHECK(scheduled_lr(s, 10) == doctest::Approx(0.01));
  CHECK(scheduled_lr(s, 15) == doctest::Approx(0.0002 + 0.0098 * 0.5));
  CHECK(scheduled_lr(s, 20) == doctest::Approx(0.0002));  // the next cycle
  CHECK(scheduled_lr(s, 30) == doctest::Approx(0.01));
  for (int64_t step = 0; step < 60; ++step) {
    INFO("step ", step);
    CHECK(scheduled_lr(s, step) >= 0.0002 - 1e-15);
    CHECK(scheduled_lr(s, step) <= 0.01 + 1e-15);
    CHECK(scheduled_lr(s, step) == doctest::Approx(scheduled_lr(s, step + 20)));
  }
  SUBCASE("halving scales the whole cycle, low point included") {
    s.halve_every_epochs = 4;
    CHECK(scheduled_lr(s, 20) == doctest::Approx(0.0001));
    CHECK(scheduled_lr(s, 30) == doctest::Approx(0.005));
  }
}
