// The steady-state training step allocates nothing on the heap, for every model of the DMNC
// paper's Table 1 on sum2seq (small dimensions, so the suite stays fast; the code path is the one
// of paper dimensions). Lmax 1 keeps the graph the same every step, so after warm-up every tape
// slot and batch buffer has its final size and any allocation left is a real per-step one.
#include <doctest/doctest.h>

#include "engine/alloc_counter.hpp"
#include "engine/threads.hpp"
#include "tools/trainer.hpp"

using namespace memgrad;

namespace {
// Heap allocations of steps 5..9, after 5 warm-up steps.
uint64_t steady_state_allocations(cli::Trainer& trainer) {
  for (int64_t step = 0; step < 5; ++step) trainer.train_step(step);  // warm-up
  const uint64_t before = heap_allocations();
  for (int64_t step = 5; step < 10; ++step) trainer.train_step(step);
  return heap_allocations() - before;
}
}  // namespace

TEST_CASE("no heap allocation in a steady-state sum2seq training step") {
  for (const std::string model : {"dmnc-late", "dmnc-early", "dnc", "lstm", "dual-lstm", "wlas"}) {
    CAPTURE(model);
    const cli::RunConfig rc =
        cli::parse_run_flags({"--task", "sum2seq", "--model", model, "--lmax", "1", "--batch", "4",
                              "--embedding", "8", "--hidden", "8", "--iterations", "20"},
                             nullptr, nullptr, nullptr);
    cli::Trainer trainer(rc);
    CHECK(steady_state_allocations(trainer) == 0);
  }
}

TEST_CASE("no heap allocation in a steady-state step of batch shards run on two threads") {
  ThreadScope threads(2);
  const cli::RunConfig rc = cli::parse_run_flags(
      {"--task", "sum2seq", "--model", "dmnc-late", "--lmax", "1", "--batch", "4", "--embedding",
       "8", "--hidden", "8", "--iterations", "20", "--shards", "2"},
      nullptr, nullptr, nullptr);
  cli::Trainer trainer(rc);
  CHECK(steady_state_allocations(trainer) == 0);
}
