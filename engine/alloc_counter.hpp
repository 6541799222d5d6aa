// Counts heap allocations made through operator new in this process (all threads), so benchmarks
// can report allocations per steady-state training step.
#pragma once
#include <cstdint>

namespace memgrad {
uint64_t heap_allocations();
}
