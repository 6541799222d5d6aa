#include "engine/threads.hpp"

#include <cblas.h>

#include <tbb/global_control.h>
#include <tbb/info.h>

namespace memgrad {

int hardware_threads() { return tbb::info::default_concurrency(); }

int active_threads() {
  return int(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
}

ThreadScope::ThreadScope(int n) : threads_(n > 0 ? n : hardware_threads()) {
  // OpenBLAS's own pool would compete with TBB's workers: parallelism is TBB's job alone.
  openblas_set_num_threads(1);
  control_ = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                   size_t(threads_));
}

ThreadScope::~ThreadScope() = default;

}  // namespace memgrad
