// Sum of two sequences (DMNC paper, section 4.1). Two views x1, x2 of L integers in [1, 50], with
// L uniform in [1, Lmax] per sample; the output is y_i = x1_i + x2_{L+1-i} in [2, 100] (the
// second view read backwards). Variable lengths are padded to the longest sample of the batch and
// masked.
//
// Batch fields (float dtype of the model, whole numbers):
//   x1, x2            [B, L]  view tokens, 1..50; 0 on padding
//   x1_mask, x2_mask  [B, L]  1 on real positions
//   y                 [B, L]  target tokens 2..100; 0 on padding
//   y_mask            [B, L]  1 on real positions
// Vocabularies: input tokens 0..50 (kInputVocab = 51, 0 = PAD); output classes 0..100
// (kOutputVocab = 101; classes 0 and 1 never occur as targets).
#pragma once
#include <cstdint>

#include "engine/batch.hpp"
#include "engine/rng.hpp"

namespace memgrad::sum2seq {

constexpr int kMaxToken = 50;
constexpr int kInputVocab = kMaxToken + 1;
constexpr int kOutputVocab = 2 * kMaxToken + 1;

// Fills `batch` with `size` fresh samples of lengths uniform in [1, lmax], drawn from rng.
void make_batch(Rng& rng, int64_t size, int lmax, DType dtype, Batch& batch);

// The training batch of a given step: a pure function of (seed, step), so a resumed run sees the
// same data as an uninterrupted one.
void train_batch(uint64_t seed, int64_t step, int64_t size, int lmax, DType dtype, Batch& batch);

// The fixed test set for one Lmax: `count` samples from a stream keyed by (seed, lmax), disjoint
// from every training stream.
void test_batch(uint64_t seed, int lmax, int64_t count, DType dtype, Batch& batch);

}  // namespace memgrad::sum2seq
