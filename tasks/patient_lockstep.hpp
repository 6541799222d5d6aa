// Lock-step batches of patients, for tasks whose batch rows are patients
// (Task::rows_are_patients): a group of `batch` patients is stepped item by item (admission by
// admission), row r of each of the group's batches holding patient r's k-th item, so that a model
// may carry a row's memory from one batch to the next. A group has as many steps as its longest
// patient; a shorter patient's row is masked after its last item.
//
// A training epoch: the patients in a permutation drawn from (seed, epoch), stably sorted by their
// number of items, longest first (so that a group's rows retire together), cut into groups, and
// the groups in a second permutation. The sorted counts fix every group's length, so every epoch
// has the same number of steps and a step's group is a pure function of the seed and the step.
// Evaluation steps the patients longest first, in index order within a length.
#pragma once
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

#include "engine/error.hpp"
#include "engine/rng.hpp"

namespace memgrad {

class PatientLockstep {
 public:
  struct Group {
    std::vector<int64_t> rows;  // patient indices, at most `batch`
    int64_t steps = 0;          // items of its longest patient
  };

  // `order` (patient indices) cut into groups of `batch`; lengths[p] = items of patient p.
  static std::vector<Group> groups(std::span<const int64_t> lengths, std::span<const int64_t> order,
                                   int64_t batch) {
    MG_CHECK(batch >= 1, "batch size must be at least 1, got ", batch);
    std::vector<Group> out;
    for (size_t i = 0; i < order.size(); i += size_t(batch)) {
      Group g;
      for (size_t j = i; j < std::min(order.size(), i + size_t(batch)); ++j) {
        g.rows.push_back(order[j]);
        g.steps = std::max(g.steps, lengths[size_t(order[j])]);
      }
      out.push_back(std::move(g));
    }
    return out;
  }
  // Evaluation groups: the patients longest first, ties by index.
  static std::vector<Group> eval_groups(std::span<const int64_t> lengths, int64_t batch) {
    std::vector<int64_t> order(lengths.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return lengths[size_t(a)] > lengths[size_t(b)]; });
    return groups(lengths, order, batch);
  }
  static int64_t total_steps(const std::vector<Group>& groups) {
    int64_t n = 0;
    for (const Group& g : groups) n += g.steps;
    return n;
  }

  // Training step `step` (epochs of steps_per_epoch steps): the rows of its group and the item
  // index k. After the first epoch nothing is allocated (the orders keep their storage).
  std::pair<std::span<const int64_t>, int64_t> train_step(std::span<const int64_t> lengths,
                                                          uint64_t seed, int64_t step,
                                                          int64_t batch) {
    const int64_t per_epoch = steps_per_epoch(lengths, batch), epoch = step / per_epoch;
    if (epoch != epoch_ || batch != epoch_batch_) make_epoch(lengths, seed, epoch, batch);
    int64_t k = step % per_epoch;
    const int64_t n = int64_t(order_.size());
    for (int64_t g : group_order_) {
      const int64_t first = g * batch, steps = lengths[size_t(order_[size_t(first)])];
      if (k < steps)
        return {std::span<const int64_t>(order_.data() + first, size_t(std::min(batch, n - first))),
                k};
      k -= steps;
    }
    fail("step ", step, " past the epoch");  // unreachable: k < per_epoch
  }
  // Steps of a training epoch (cached for the last batch size asked).
  int64_t steps_per_epoch(std::span<const int64_t> lengths, int64_t batch) {
    if (batch != per_epoch_batch_) {
      per_epoch_ = std::max<int64_t>(1, total_steps(eval_groups(lengths, batch)));
      per_epoch_batch_ = batch;
    }
    return per_epoch_;
  }

 private:
  void make_epoch(std::span<const int64_t> lengths, uint64_t seed, int64_t epoch, int64_t batch) {
    const size_t n = lengths.size();
    order_.resize(n);
    rank_.resize(n);
    std::iota(order_.begin(), order_.end(), 0);
    Rng rng(seed, uint64_t(epoch));
    for (int64_t k = int64_t(n) - 1; k > 0; --k)
      std::swap(order_[size_t(k)], order_[size_t(rng.below(uint64_t(k + 1)))]);
    for (size_t i = 0; i < n; ++i) rank_[size_t(order_[i])] = int64_t(i);
    std::sort(order_.begin(), order_.end(), [&](int64_t a, int64_t b) {
      return lengths[size_t(a)] != lengths[size_t(b)] ? lengths[size_t(a)] > lengths[size_t(b)]
                                                      : rank_[size_t(a)] < rank_[size_t(b)];
    });
    group_order_.resize((n + size_t(batch) - 1) / size_t(batch));
    std::iota(group_order_.begin(), group_order_.end(), 0);
    for (int64_t k = int64_t(group_order_.size()) - 1; k > 0; --k)
      std::swap(group_order_[size_t(k)], group_order_[size_t(rng.below(uint64_t(k + 1)))]);
    epoch_ = epoch;
    epoch_batch_ = batch;
  }

  std::vector<int64_t> order_, rank_, group_order_;
  int64_t epoch_ = -1, epoch_batch_ = 0;
  int64_t per_epoch_ = 0, per_epoch_batch_ = 0;
};

}  // namespace memgrad
