// The one place that sets how many threads memgrad uses. TBB runs per-sample work over the batch
// and splits large matrix products into row blocks; OpenBLAS is kept single-threaded so the two
// never oversubscribe the cores. Partitions are fixed (independent of the thread count), so
// results for a given seed are the same with 1 or N threads.
#pragma once
#include <cstdint>
#include <memory>

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

namespace memgrad {

class ThreadScope {
 public:
  // n <= 0 means all hardware threads.
  explicit ThreadScope(int n);
  ~ThreadScope();
  int threads() const { return threads_; }

 private:
  int threads_;
  std::unique_ptr<tbb::global_control> control_;
};

int hardware_threads();
// Threads TBB may use right now (respects an active ThreadScope).
int active_threads();

// Calls body(i) for i in [0, n) in parallel, each index exactly once, in fixed-size chunks.
// Bodies must write disjoint outputs; reductions go through per-index buffers summed in order.
template <class Body>
void parallel_for_each(int64_t n, Body&& body, int64_t grain = 1) {
  if (n <= 0) return;
  if (n == 1 || active_threads() == 1) {
    for (int64_t i = 0; i < n; ++i) body(i);
    return;
  }
  tbb::parallel_for(
      tbb::blocked_range<int64_t>(0, n, grain),
      [&](const tbb::blocked_range<int64_t>& r) {
        for (int64_t i = r.begin(); i < r.end(); ++i) body(i);
      },
      tbb::simple_partitioner());
}

}  // namespace memgrad
