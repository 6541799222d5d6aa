// Seeded, counter-based randomness. A stream is a pure function of (seed, key): the same key always
// gives the same numbers, so a stochastic op's noise can be replayed (gradient checks, exact
// resume) and no generator state is shared between threads.
#pragma once
#include <cmath>
#include <cstdint>

namespace memgrad {

// SplitMix64 finaliser: a bijective mixer with good avalanche, cheap enough for per-element noise.
inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

class Rng {
 public:
  explicit Rng(uint64_t seed = 0, uint64_t key = 0)
      : state_(mix64(seed) ^ mix64(key * 0xd1b54a32d192ed03ULL + 1)) {}

  uint64_t next_u64() { return mix64(state_++); }
  // Uniform in [0, 1), 53 random bits.
  double uniform() { return double(next_u64() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [0, n).
  uint64_t below(uint64_t n) { return next_u64() % n; }
  // Standard normal by Box-Muller (one value per call; simple and replayable).
  double normal() {
    double u1 = uniform();
    double u2 = uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  uint64_t state() const { return state_; }
  void set_state(uint64_t s) { state_ = s; }

 private:
  uint64_t state_;
};

}  // namespace memgrad
