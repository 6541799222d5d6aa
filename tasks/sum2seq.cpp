#include "tasks/sum2seq.hpp"

#include <algorithm>
#include <vector>

namespace memgrad::sum2seq {

namespace {

// The batch's fields, zero-filled, for `size` samples of at most `longest` numbers.
struct Fields {
  Tensor &x1, &x2, &m1, &m2, &y, &ym;
};
Fields make_fields(int64_t size, int64_t longest, bool end_marker, DType dtype, Batch& batch) {
  const Shape shape{size, longest}, view_shape{size, longest + (end_marker ? 1 : 0)};
  return {batch.field("x1", view_shape, dtype),
          batch.field("x2", view_shape, dtype),
          batch.field("x1_mask", view_shape, dtype),
          batch.field("x2_mask", view_shape, dtype),
          batch.field("y", shape, dtype),
          batch.field("y_mask", shape, dtype)};
}

// Writes sample s (views a, b of the same length L) and its target.
void write_sample(const Fields& f, int64_t s, std::span<const int> a, std::span<const int> b,
                  bool end_marker) {
  const int64_t len = int64_t(a.size()), view_width = f.x1.dim(1), longest = f.y.dim(1);
  for (int64_t i = 0; i < len; ++i) {
    const int64_t at = s * view_width + i;
    f.x1.set(at, a[size_t(i)]);
    f.x2.set(at, b[size_t(i)]);
    f.m1.set(at, 1);
    f.m2.set(at, 1);
    f.y.set(s * longest + i, a[size_t(i)] + b[size_t(len - 1 - i)]);
    f.ym.set(s * longest + i, 1);
  }
  if (end_marker) {
    const int64_t at = s * view_width + len;
    f.x1.set(at, kEndToken);
    f.x2.set(at, kEndToken);
    f.m1.set(at, 1);
    f.m2.set(at, 1);
  }
}

// Samples of the given lengths (the longest of them `longest`), numbers drawn from rng.
void fill_batch(Rng& rng, std::span<const int> lengths, int longest, const Format& f, DType dtype,
                Batch& batch) {
  const int64_t size = int64_t(lengths.size());
  const Fields fields = make_fields(size, longest, f.end_marker, dtype, batch);
  // Scratch reused across calls (per thread), so a steady-state step allocates nothing here.
  thread_local std::vector<int> a, b;
  a.resize(static_cast<size_t>(longest));
  b.resize(static_cast<size_t>(longest));
  for (int64_t s = 0; s < size; ++s) {
    const int len = lengths[size_t(s)];
    for (int i = 0; i < len; ++i) a[size_t(i)] = 1 + int(rng.below(kMaxToken));
    for (int i = 0; i < len; ++i) b[size_t(i)] = 1 + int(rng.below(kMaxToken));
    write_sample(fields, s, std::span<const int>(a.data(), size_t(len)),
                 std::span<const int>(b.data(), size_t(len)), f.end_marker);
  }
  batch.size = size;
}

}  // namespace

void make_batch(Rng& rng, int64_t size, const Format& f, DType dtype, Batch& batch,
                bool one_length) {
  const int lmax = f.lmax;
  MG_CHECK(size >= 1, "sum2seq: batch size must be at least 1, got ", size);
  MG_CHECK(lmax >= 1, "sum2seq: Lmax must be at least 1, got ", lmax);
  // Scratch reused across calls (per thread), so a steady-state step allocates nothing here.
  thread_local std::vector<int> lengths;
  lengths.resize(static_cast<size_t>(size));
  int longest = 1;
  const int shared = one_length ? 1 + int(rng.below(uint64_t(lmax))) : 0;
  for (auto& l : lengths) {
    l = one_length ? shared : 1 + int(rng.below(uint64_t(lmax)));
    longest = std::max(longest, l);
  }
  fill_batch(rng, lengths, longest, f, dtype, batch);
}

void longest_batch(int64_t size, const Format& f, DType dtype, Batch& batch) {
  MG_CHECK(size >= 1, "sum2seq: batch size must be at least 1, got ", size);
  MG_CHECK(f.lmax >= 1, "sum2seq: Lmax must be at least 1, got ", f.lmax);
  thread_local std::vector<int> lengths;
  lengths.assign(static_cast<size_t>(size), f.lmax);
  Rng rng(0, 1);  // the numbers do not matter here, only the shapes
  fill_batch(rng, lengths, f.lmax, f, dtype, batch);
}

void sample_batch(std::span<const int> x1, std::span<const int> x2, const Format& f, DType dtype,
                  Batch& batch) {
  MG_CHECK(!x1.empty() && x1.size() == x2.size(), "sum2seq: the two views must have the same ",
           "length L >= 1, got ", x1.size(), " and ", x2.size(), " numbers");
  for (auto view : {x1, x2})
    for (int v : view)
      MG_CHECK(v >= 1 && v <= kMaxToken, "sum2seq: view numbers must be in [1, ", kMaxToken,
               "], got ", v);
  write_sample(make_fields(1, int64_t(x1.size()), f.end_marker, dtype, batch), 0, x1, x2,
               f.end_marker);
  batch.size = 1;
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
