// The order in which a data task visits its training samples: a fresh permutation every epoch,
// drawn from (seed, epoch), so that a step's batch is a pure function of the seed and the step
// (a resumed run sees the same batches). Step k of an epoch takes the k-th block of batch_size
// samples; the last partial block is left out (a new order next epoch).
#pragma once
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "engine/rng.hpp"

namespace memgrad {

class EpochOrder {
 public:
  // The samples of `step`'s batch: `items` (the training samples' ids) permuted for epoch
  // step / per_epoch by Rng(seed, epoch), block step % per_epoch. The permutation is kept
  // between calls of the same epoch.
  std::span<const int64_t> batch(const std::vector<int64_t>& items, uint64_t seed, int64_t step,
                                 int64_t batch_size, int64_t per_epoch) {
    const int64_t epoch = step / per_epoch;
    if (epoch != epoch_ || order_.size() != items.size()) {
      order_ = items;
      Rng rng(seed, uint64_t(epoch));
      for (int64_t k = int64_t(order_.size()) - 1; k > 0; --k)
        std::swap(order_[size_t(k)], order_[size_t(rng.below(uint64_t(k + 1)))]);
      epoch_ = epoch;
    }
    const int64_t start = (step % per_epoch) * batch_size;
    return {order_.data() + start, size_t(batch_size)};
  }

 private:
  std::vector<int64_t> order_;
  int64_t epoch_ = -1;
};

}  // namespace memgrad
