#include "tasks/sum2seq.hpp"

#include <algorithm>
#include <vector>

namespace memgrad::sum2seq {

void make_batch(Rng& rng, int64_t size, const Format& f, DType dtype, Batch& batch,
                bool one_length) {
  const int lmax = f.lmax;
  MG_CHECK(size >= 1, "sum2seq: batch size must be at least 1, got ", size);
  MG_CHECK(lmax >= 1, "sum2seq: Lmax must be at least 1, got ", lmax);
  // Scratch reused across calls (per thread), so a steady-state step allocates nothing here.
  thread_local std::vector<int> lengths, a, b;
  lengths.resize(static_cast<size_t>(size));
  int longest = 1;
  const int shared = one_length ? 1 + int(rng.below(uint64_t(lmax))) : 0;
  for (auto& l : lengths) {
    l = one_length ? shared : 1 + int(rng.below(uint64_t(lmax)));
    longest = std::max(longest, l);
  }
  const int64_t view_width = longest + (f.end_marker ? 1 : 0);
  const Shape shape{size, longest}, view_shape{size, view_width};
  Tensor& x1 = batch.field("x1", view_shape, dtype);
  Tensor& x2 = batch.field("x2", view_shape, dtype);
  Tensor& m1 = batch.field("x1_mask", view_shape, dtype);
  Tensor& m2 = batch.field("x2_mask", view_shape, dtype);
  Tensor& y = batch.field("y", shape, dtype);
  Tensor& ym = batch.field("y_mask", shape, dtype);
  a.resize(static_cast<size_t>(longest));
  b.resize(static_cast<size_t>(longest));
  for (int64_t s = 0; s < size; ++s) {
    const int len = lengths[size_t(s)];
    for (int i = 0; i < len; ++i) a[size_t(i)] = 1 + int(rng.below(kMaxToken));
    for (int i = 0; i < len; ++i) b[size_t(i)] = 1 + int(rng.below(kMaxToken));
    for (int i = 0; i < len; ++i) {
      const int64_t at = s * view_width + i;
      x1.set(at, a[size_t(i)]);
      x2.set(at, b[size_t(i)]);
      m1.set(at, 1);
      m2.set(at, 1);
      y.set(s * longest + i, a[size_t(i)] + b[size_t(len - 1 - i)]);
      ym.set(s * longest + i, 1);
    }
    if (f.end_marker) {
      const int64_t at = s * view_width + len;
      x1.set(at, kEndToken);
      x2.set(at, kEndToken);
      m1.set(at, 1);
      m2.set(at, 1);
    }
  }
  batch.size = size;
}

void train_batch(uint64_t seed, int64_t step, int64_t size, const Format& f, DType dtype,
                 Batch& batch) {
  Rng rng(seed, 2 * uint64_t(step));  // even keys: training
  make_batch(rng, size, f, dtype, batch, f.one_length_per_batch);
}

void test_batch(uint64_t seed, const Format& f, int64_t count, DType dtype, Batch& batch) {
  Rng rng(seed ^ 0x7e57da7aULL, 2 * uint64_t(f.lmax) + 1);  // odd keys: test
  make_batch(rng, count, f, dtype, batch);
}

}  // namespace memgrad::sum2seq
