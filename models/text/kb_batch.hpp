// The batch a knowledge-base memory network reads (task codiesp-kb, tasks/codiesp_kb.hpp):
//   "note"      [B, V]  word counts of each note (its bag of words, Φ(x) before the embedding);
//   "kb_keys"   [L, V]  word counts of each label's page (key), one page per label;
//   "kb_values" [L, V]  word counts of each label's title (value);
//   "labels"    [B, L]  0/1 targets.
// Page l is label l's page (C-MemNN: the candidate diagnoses are the label set), which is what the
// auxiliary slot loss needs. Bags are counts, so Φ(d) = Σ_j E[w_j] is one GEMM: counts · E.
#pragma once
#include <cstdint>
#include <string>

#include "engine/batch.hpp"
#include "engine/rng.hpp"
#include "engine/tape.hpp"

namespace memgrad::text {

struct KbBatch {
  const Tensor *note, *keys, *values, *labels;
  int64_t b = 0, l = 0;
};

// The four fields, checked against the model's vocabulary V and label count L; an Error names
// the model, the field and the shapes.
KbBatch read_kb_batch(const Batch& batch, const std::string& model, int64_t vocab, int64_t labels);

// A tiny batch for gradient checks: B notes and L pages over V words (sparse counts in 0..2, every
// page and note non-empty), labels holding both classes for every label.
void make_kb_check_batch(Rng& rng, DType dtype, Batch& batch, int64_t B, int64_t L, int64_t V);

}  // namespace memgrad::text
