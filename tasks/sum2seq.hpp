// Sum of two sequences (DMNC paper, section 4.1). Two views x1, x2 of L integers in [1, 50], with
// L uniform in [1, Lmax] per sample; the output is y_i = x1_i + x2_{L+1-i} in [2, 100] (the
// second view read backwards). Variable lengths are padded to the longest sample of the batch and
// masked.
//
// End marker (setting "end_marker", default on): each view is followed by one extra event, the
// token kEndToken = 51, as in the DMNC authors' data layout (their token 1 after both views).
// Without it an encoder has no step after its last number; with it, every encoder gets one step to
// leave its memory and read weights ready for the decoder whatever L is. Measured effect in
// README.md.
//
// Batch fields (float dtype of the model, whole numbers):
//   x1, x2            [B, L(+1)]  view tokens, 1..50 (then 51 with the end marker); 0 on padding
//   x1_mask, x2_mask  [B, L(+1)]  1 on real positions
//   y                 [B, L]  target tokens 2..100; 0 on padding
//   y_mask            [B, L]  1 on real positions
// Vocabularies: input tokens 0..51 (input_vocab(true) = 52, 0 = PAD); output classes 0..100
// (kOutputVocab = 101; classes 0 and 1 never occur as targets).
#pragma once
#include <cstdint>
#include <span>

#include "engine/batch.hpp"
#include "engine/rng.hpp"

namespace memgrad::sum2seq {

constexpr int kMaxToken = 50;
constexpr int kEndToken = kMaxToken + 1;
constexpr int kOutputVocab = 2 * kMaxToken + 1;
constexpr int input_vocab(bool end_marker) { return end_marker ? kEndToken + 1 : kMaxToken + 1; }

struct Format {
  int lmax = 10;           // L uniform in [1, lmax]
  bool end_marker = true;  // each view followed by kEndToken
  // Training batches only: one L drawn per batch for all its samples, as the DMNC authors'
  // generator (sum2_run.py) makes them. Test sets always draw L per sample.
  bool one_length_per_batch = false;
};

// Fills `batch` with `size` fresh samples of lengths uniform in [1, f.lmax], drawn from rng (one
// length for all of them with `one_length`).
void make_batch(Rng& rng, int64_t size, const Format& f, DType dtype, Batch& batch,
                bool one_length = false);

// `size` samples all of length f.lmax: no training batch is longer, or has more rows stepping at
// any position (Task::largest_train_batch).
void longest_batch(int64_t size, const Format& f, DType dtype, Batch& batch);

// A batch of one sample from its two views, laid out as make_batch lays it out. The views must
// have the same length L >= 1 and numbers in [1, 50]; an Error says what is wrong otherwise.
void sample_batch(std::span<const int> x1, std::span<const int> x2, const Format& f, DType dtype,
                  Batch& batch);

// The training batch of a given step: a pure function of (seed, step), so a resumed run sees the
// same data as an uninterrupted one.
void train_batch(uint64_t seed, int64_t step, int64_t size, const Format& f, DType dtype,
                 Batch& batch);

// The fixed test set for one Lmax (f.lmax): `count` samples from a stream keyed by (seed, lmax),
// disjoint from every training stream. The numbers do not depend on f.end_marker.
void test_batch(uint64_t seed, const Format& f, int64_t count, DType dtype, Batch& batch);

}  // namespace memgrad::sum2seq
