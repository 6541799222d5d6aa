#include "tasks/sum2seq.hpp"

#include <algorithm>
#include <vector>

namespace memgrad::sum2seq {

void make_batch(Rng& rng, int64_t size, int lmax, DType dtype, Batch& batch) {
  MG_CHECK(size >= 1, "sum2seq: batch size must be at least 1, got ", size);
  MG_CHECK(lmax >= 1, "sum2seq: Lmax must be at least 1, got ", lmax);
  // Scratch reused across calls (per thread), so a steady-state step allocates nothing here.
  thread_local std::vector<int> lengths, a, b;
  lengths.resize(static_cast<size_t>(size));
  int longest = 1;
  for (auto& l : lengths) {
    l = 1 + int(rng.below(uint64_t(lmax)));
    longest = std::max(longest, l);
  }
  const Shape shape{size, longest};
  Tensor& x1 = batch.field("x1", shape, dtype);
  Tensor& x2 = batch.field("x2", shape, dtype);
  Tensor& m1 = batch.field("x1_mask", shape, dtype);
  Tensor& m2 = batch.field("x2_mask", shape, dtype);
  Tensor& y = batch.field("y", shape, dtype);
  Tensor& ym = batch.field("y_mask", shape, dtype);
  a.resize(static_cast<size_t>(longest));
  b.resize(static_cast<size_t>(longest));
  for (int64_t s = 0; s < size; ++s) {
    const int len = lengths[size_t(s)];
    for (int i = 0; i < len; ++i) a[size_t(i)] = 1 + int(rng.below(kMaxToken));
    for (int i = 0; i < len; ++i) b[size_t(i)] = 1 + int(rng.below(kMaxToken));
    for (int i = 0; i < len; ++i) {
      const int64_t at = s * longest + i;
      x1.set(at, a[size_t(i)]);
      x2.set(at, b[size_t(i)]);
      m1.set(at, 1);
      m2.set(at, 1);
      y.set(at, a[size_t(i)] + b[size_t(len - 1 - i)]);
      ym.set(at, 1);
    }
  }
  batch.size = size;
}

void train_batch(uint64_t seed, int64_t step, int64_t size, int lmax, DType dtype, Batch& batch) {
  Rng rng(seed, 2 * uint64_t(step));  // even keys: training
  make_batch(rng, size, lmax, dtype, batch);
}

void test_batch(uint64_t seed, int lmax, int64_t count, DType dtype, Batch& batch) {
  Rng rng(seed ^ 0x7e57da7aULL, 2 * uint64_t(lmax) + 1);  // odd keys: test
  make_batch(rng, count, lmax, dtype, batch);
}

}  // namespace memgrad::sum2seq
