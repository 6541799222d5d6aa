#include "models/dnc/two_view.hpp"

#include "engine/quote.hpp"
#include "models/layers/batch_fields.hpp"

namespace memgrad::dnc {

Views read_views(Tape& tape, const Batch& batch, const std::string& model) {
  Views v;
  const char* names[2] = {"x1", "x2"};
  const char* masks[2] = {"x1_mask", "x2_mask"};
  for (int i = 0; i < 2; ++i) {
    const Tensor& x = layers::field(batch, model, names[i], 2);
    const Tensor& m = layers::field(batch, model, masks[i], 2);
    layers::expect_shape(model, masks[i], m, x.shape());
    if (i == 0) v.batch = x.dim(0);
    MG_CHECK(x.dim(0) == v.batch, model, ": batch field 'x2' has ", x.dim(0),
             " samples but 'x1' has ", v.batch);
    v.length[i] = x.dim(1);
    v.x[i] = tape.input(x);
    v.mask[i] = tape.input(m);
  }
  return v;
}

std::array<bool, 2> views_read(const nlohmann::json& config, const std::string& model) {
  const std::string views = config.at("views").get<std::string>();
  MG_CHECK(views == "both" || views == "dx" || views == "proc", model,
           ": views must be \"both\", \"dx\" (view 1) or \"proc\" (view 2), got ", quote(views));
  return {views != "proc", views != "dx"};
}

nlohmann::json dmnc_paper_recipe() {
  return {{"optimizer", "adam"},    {"lr", 1e-3},           {"batch", 50},
          {"iterations", 10000},    {"clip_value", 10.0},   {"clip_norm", 5.0},
          {"lr_decay_start", 5000}, {"lr_decay_final", 0.1}};
}

void make_check_batch(Rng& rng, DType dtype, Batch& batch, int64_t input_vocab,
                      int64_t output_vocab, int64_t input_vocab2) {
  if (input_vocab2 <= 0) input_vocab2 = input_vocab;
  const int64_t B = 2, L = 3;
  // Per sample lengths: view 1 {3, 1}, view 2 {2, 3}, output {3, 2}.
  const int64_t len1[B] = {3, 1}, len2[B] = {2, 3}, leny[B] = {3, 2};
  // Create every field first: a new field may move the others (references into the batch).
  for (const char* f : {"x1", "x2", "x1_mask", "x2_mask", "y", "y_mask"})
    batch.field(f, Shape{B, L}, dtype);
  batch.field("labels", Shape{B, output_vocab}, dtype);
  Tensor& x1 = batch.field("x1", Shape{B, L}, dtype);
  Tensor& x2 = batch.field("x2", Shape{B, L}, dtype);
  Tensor& m1 = batch.field("x1_mask", Shape{B, L}, dtype);
  Tensor& m2 = batch.field("x2_mask", Shape{B, L}, dtype);
  Tensor& y = batch.field("y", Shape{B, L}, dtype);
  Tensor& ym = batch.field("y_mask", Shape{B, L}, dtype);
  Tensor& labels = batch.field("labels", Shape{B, output_vocab}, dtype);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < L; ++t) {
      const int64_t at = b * L + t;
      if (t < len1[b])
        x1.set(at, double(1 + int64_t(rng.below(uint64_t(input_vocab - 1))))), m1.set(at, 1);
      if (t < len2[b])
        x2.set(at, double(1 + int64_t(rng.below(uint64_t(input_vocab2 - 1))))), m2.set(at, 1);
      if (t < leny[b]) y.set(at, double(rng.below(uint64_t(output_vocab)))), ym.set(at, 1);
    }
    labels.set(b * output_vocab + int64_t(rng.below(uint64_t(output_vocab))), 1);
    for (int64_t c = 0; c < output_vocab; ++c)
      if (rng.uniform() < 0.3) labels.set(b * output_vocab + c, 1);
  }
  batch.size = B;
}

}  // namespace memgrad::dnc
