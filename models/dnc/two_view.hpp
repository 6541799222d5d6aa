// The two-view sequence setting of the DMNC paper (Le, Tran, Venkatesh 2018), shared by its models
// (DMNC, the view-concatenated LSTM and DNC, Dual LSTM, WLAS): the batch they read, a tiny batch of
// that shape for gradient checks, and the paper's training recipe.
#pragma once
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/batch.hpp"
#include "engine/rng.hpp"
#include "engine/tape.hpp"

namespace memgrad::dnc {

// The two-view batch these models read: x1, x2 [B, L1], [B, L2] with masks of the same shapes,
// checked and put on the tape.
struct Views {
  Var x[2], mask[2];
  int64_t batch = 0;
  int64_t length[2] = {0, 0};
};
Views read_views(Tape& tape, const Batch& batch, const std::string& model);

// Config "views" of the view-concatenated models (lstm, dnc) and the bag-of-codes baselines
// (binary-relevance, classifier-chains): "both" (the default), or one view
// alone, "dx" = view 1 (x1) or "proc" = view 2 (x2), as mimic-drugs names them, for the DMNC
// paper's single-view rows (Table 3). Returns which of the two views the model reads.
std::array<bool, 2> views_read(const nlohmann::json& config, const std::string& model);

// The training recipe of the DMNC paper's models (DMNC, DNC and the Table 1 baselines): Adam
// (lr 1e-3), batch 50, 10,000 iterations, gradients clipped by value to +-10 as in the authors'
// code, plus two choices of ours (docs/sum2seq.md): a global-norm clip of 5 (without it,
// 10,000-step DMNC runs collapsed to uniform predictions after a gradient spike) and a linear
// learning-rate decay over the second half, to 0.1 lr at the last step (at a constant rate the test
// accuracy of both DMNC modes swung by 3-4 points between evaluations late in training).
nlohmann::json dmnc_paper_recipe();

// A tiny two-view check batch (B = 2, L = 3): view lengths differ between samples and between the
// views (masks with zeros), y_mask likewise; labels [2, output_vocab] multi-hot for set output.
void make_check_batch(Rng& rng, DType dtype, Batch& batch, int64_t input_vocab,
                      int64_t output_vocab, int64_t input_vocab2 = 0);

}  // namespace memgrad::dnc
