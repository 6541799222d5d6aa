// Shared pieces of the text models (see text_inputs.hpp).
#include "models/text/text_inputs.hpp"

#include <algorithm>

#include "engine/error.hpp"
#include "models/layers/row_packing.hpp"
#include "ops/ops.hpp"

namespace memgrad::text {
namespace {
// Keys of the tape's index scratch (row lists reused from step to step).
const char kLengths = 0, kOrder = 0, kSorted = 0, kInverse = 0, kOffsets = 0, kAligned = 0;
}  // namespace

nlohmann::json task_dims() { return {{"input_vocab", 2}, {"labels", 1}, {"output", "multilabel"}}; }

nlohmann::json recurrent_train_defaults() {
  return {{"optimizer", "adam"}, {"lr", 1e-3},   {"batch", 32},
          {"clip_norm", 5.0},    {"epochs", 20}, {"iterations", 0}};
}

nlohmann::json curriculum_settings() {
  return {{"codiesp", {{"curriculum_start", 50}, {"curriculum_growth", 1.35}}}};
}

TextInputs read_inputs(Tape& tape, const Batch& batch, const std::string& model, int64_t vocab,
                       int64_t labels) {
  const Tensor& ids = batch.get("tokens");
  const Tensor& mask = batch.get("tokens_mask");
  const Tensor& y = batch.get("labels");
  MG_CHECK(ids.rank() == 2 && mask.shape() == ids.shape() && y.rank() == 2 &&
               y.dim(0) == ids.dim(0) && y.dim(1) == labels,
           model, ": batch fields tokens ", ids.shape(), ", tokens_mask ", mask.shape(),
           ", labels ", y.shape(), " (want [B, T], [B, T], [B, ", labels, "])");
  const int64_t B = ids.dim(0), T = ids.dim(1);
  TextInputs in;
  in.batch = B;
  in.steps = T;
  std::vector<int64_t>& len = tape.index_scratch(&kLengths);
  len.assign(size_t(B), 0);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < T; ++t) {
      const double m = mask.at(b * T + t), id = ids.at(b * T + t);
      if (m == 0) continue;
      MG_CHECK(m == 1 && len[size_t(b)] == t, model, ": tokens_mask row ", b,
               " is not a prefix of ones");
      MG_CHECK(id >= 0 && id < double(vocab) && id == double(int64_t(id)), model, ": word id ", id,
               " at row ", b, ", step ", t, " is not in [0, ", vocab, ")");
      ++len[size_t(b)];
    }
    MG_CHECK(len[size_t(b)] >= 1, model, ": row ", b, " of the batch has no words");
  }
  std::vector<int64_t>& order = tape.index_scratch(&kOrder);
  in.ids = tape.input(ids);
  in.mask = tape.input(mask);
  in.labels = tape.input(y);
  if (layers::longest_first(len, order)) {
    // Sorted rows for the packed steps; unsort[b] = the sorted position of batch row b.
    const Var perm = layers::index_leaf(tape, order, ids.dtype());
    in.ids = gather_rows(in.ids, perm);
    in.mask = gather_rows(in.mask, perm);
    in.labels = gather_rows(in.labels, perm);
    std::vector<int64_t>& inverse = tape.index_scratch(&kInverse);
    inverse.assign(size_t(B), 0);
    for (int64_t p = 0; p < B; ++p) inverse[size_t(order[size_t(p)])] = p;
    in.unsort = layers::index_leaf(tape, inverse, ids.dtype());
    std::vector<int64_t>& sorted = tape.index_scratch(&kSorted);
    sorted.clear();
    for (int64_t p = 0; p < B; ++p) sorted.push_back(len[size_t(order[size_t(p)])]);
    in.lengths = sorted;
  } else {
    in.lengths = len;
  }
  return in;
}

Var word_ids(Tape& tape, const TextInputs& in, bool reversed) {
  const int64_t B = in.batch, T = in.steps;
  Var out = tape.constant(Shape{T, B}, in.ids.dtype(), 0.0);
  Tensor& dst = tape.value(out.id);
  const Tensor& src = in.ids.value();
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n = in.lengths[size_t(b)];
    for (int64_t t = 0; t < n; ++t) dst.set(t * B + b, src.at(b * T + (reversed ? n - 1 - t : t)));
  }
  return out;
}

Var embed_words(Tape& tape, Var table, const TextInputs& in, bool reversed, double dropout,
                bool training) {
  return memgrad::dropout(gather_rows(table, word_ids(tape, in, reversed)), dropout, training);
}

Var run_gru(Tape& tape, const GruCell& cell, Var xw, const TextInputs& in, int slot,
            std::vector<Var>* outputs) {
  const int64_t B = in.batch, T = in.steps, G = 3 * cell.hidden();
  const Var flat = reshape(xw, Shape{T * B, G});
  Var h = cell.zero_state(tape, B, xw.dtype());
  layers::RetiringRows rows(in.mask, slot);
  Var* fields[] = {&h};
  for (int64_t t = 0; t < T; ++t) {
    const int64_t n = rows.begin_step(t, fields);
    if (n == 0) break;
    h = cell.step_projected(tape, slice(flat, 0, t * B, n), h);  // step t's leading rows: a view
    if (outputs) outputs->push_back(h);
  }
  rows.finish(fields);
  return h;
}

Var align_reversed(Tape& tape, const std::vector<Var>& outputs, const TextInputs& in) {
  const int64_t B = in.batch, T = in.steps;
  // Step s's outputs start at offset[s] of the outputs stacked row-wise.
  std::vector<int64_t>& offset = tape.index_scratch(&kOffsets);
  offset.assign(outputs.size() + 1, 0);
  for (size_t s = 0; s < outputs.size(); ++s) offset[s + 1] = offset[s] + outputs[s].dim(0);
  std::vector<int64_t>& index = tape.index_scratch(&kAligned);
  index.assign(size_t(B * T), 0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < in.lengths[size_t(b)]; ++t)
      index[size_t(t * B + b)] = offset[size_t(in.lengths[size_t(b)] - 1 - t)] + b;
  const Var stacked = concat(std::span<const Var>(outputs), 0);
  const Var idx = reshape(layers::index_leaf(tape, index, stacked.dtype()), Shape{T, B});
  return gather_rows(stacked, idx);
}

ForwardResult multilabel_result(const TextInputs& in, Var logits) {
  ForwardResult r;
  r.loss = bce_with_logits(logits, in.labels);
  r.predictions = in.unsort.defined() ? gather_rows(logits, in.unsort) : logits;
  return r;
}

std::string trace_name(int64_t t, const char* suffix) {
  std::string name = "t";
  name += std::to_string(t);
  name += suffix;
  return name;
}

void make_check_batch(Rng& rng, DType dtype, Batch& batch, int64_t rows, int64_t max_len,
                      int64_t vocab, int64_t labels) {
  std::vector<int64_t> len(static_cast<size_t>(rows));
  for (auto& n : len) n = 1 + int64_t(rng.below(uint64_t(max_len)));
  len[0] = 1;                       // a short row first and
  len[size_t(rows) - 1] = max_len;  // a full one last: the models must sort the rows
  const int64_t T = max_len;
  Tensor& ids = batch.field("tokens", Shape{rows, T}, dtype);
  Tensor& mask = batch.field("tokens_mask", Shape{rows, T}, dtype);
  Tensor& y = batch.field("labels", Shape{rows, labels}, dtype);
  for (int64_t b = 0; b < rows; ++b) {
    for (int64_t t = 0; t < len[size_t(b)]; ++t) {
      ids.set(b * T + t, double(1 + rng.below(uint64_t(vocab - 1))));
      mask.set(b * T + t, 1.0);
    }
    for (int64_t l = 0; l < labels; ++l) y.set(b * labels + l, double((b + l) % 2));
  }
  batch.size = rows;
}

}  // namespace memgrad::text
