// sparse-reader (see sparse_reader.hpp) and its registration with gradient-check variants.
#include "sparse_reader.hpp"

#include <algorithm>
#include <memgrad/ops/ops.hpp>

#include "sparsemax.hpp"

namespace custom {

using memgrad::Shape;
using memgrad::Var;

namespace {
nlohmann::json defaults() { return {{"width", 8}, {"classes", 3}}; }
}  // namespace

SparseReader::SparseReader(const nlohmann::json& config, memgrad::DType dtype, uint64_t seed)
    : Model(dtype), config_(defaults()) {
  config_.update(config);
  width_ = config_.at("width").get<int64_t>();
  classes_ = config_.at("classes").get<int64_t>();
  MG_CHECK(width_ >= 1 && classes_ >= 2, "sparse-reader: width must be >= 1 and classes >= 2");
  memgrad::Rng rng(seed);
  wq_ = &params_.add_uniform("wq", Shape{width_, width_}, -0.5, 0.5, rng);
  wo_ = &params_.add_uniform("wo", Shape{width_, classes_}, -0.5, 0.5, rng);
  bo_ = &params_.add("bo", Shape{classes_});
}

memgrad::ForwardResult SparseReader::forward(memgrad::Tape& tape, const memgrad::Batch& batch,
                                             const memgrad::ForwardOptions&) {
  Var memory = tape.input(batch.get("memory"));  // [B, N, D]
  Var query = tape.input(batch.get("query"));    // [B, D]
  MG_CHECK(memory.shape().rank == 3 && memory.dim(2) == width_ && query.dim(1) == width_,
           "sparse-reader: memory must be [B, N, ", width_, "] and query [B, ", width_, "], got ",
           memory.shape(), " and ", query.shape());
  const int64_t b = query.dim(0), slots = memory.dim(1);
  Var key = memgrad::matmul(query, tape.param(*wq_));                                // [B, D]
  Var scores = memgrad::bmm(memory, memgrad::reshape(key, Shape{b, width_, 1}));     // [B, N, 1]
  Var attention = sparsemax(memgrad::reshape(scores, Shape{b, slots}));              // [B, N]
  Var read = memgrad::bmm(memgrad::reshape(attention, Shape{b, 1, slots}), memory);  // [B, 1, D]
  Var logits = memgrad::addmm(tape.param(*bo_), memgrad::reshape(read, Shape{b, width_}),
                              tape.param(*wo_));  // [B, C]
  Var loss = memgrad::cross_entropy(logits, tape.input(batch.get("target")));
  return {.loss = loss, .predictions = logits};
}

void make_toy_batch(memgrad::Rng& rng, memgrad::DType dtype, int64_t batch, int64_t slots,
                    int64_t width, int64_t classes, memgrad::Batch& out) {
  const int64_t half = width / 2;
  MG_CHECK(classes <= width - half, "make_toy_batch: classes must be <= width / 2");
  memgrad::Tensor& memory = out.field("memory", Shape{batch, slots, width}, dtype);
  memgrad::Tensor& query = out.field("query", Shape{batch, width}, dtype);
  memgrad::Tensor& target = out.field("target", Shape{batch}, dtype);
  for (int64_t i = 0; i < batch; ++i) {
    for (int64_t j = 0; j < slots * width; ++j)
      memory.set(i * slots * width + j, rng.uniform(-1.0, 1.0));
    const int64_t hit = std::min(slots - 1, int64_t(rng.uniform() * double(slots)));
    const int64_t row = (i * slots + hit) * width;
    for (int64_t d = 0; d < half; ++d) query.set(i * width + d, memory.at(row + d));
    int64_t best = 0;
    for (int64_t c = 1; c < classes; ++c)
      if (memory.at(row + half + c) > memory.at(row + half + best)) best = c;
    target.set(i, double(best));
  }
}

namespace {

const bool kRegistered = [] {
  memgrad::register_model(
      {.name = "sparse-reader",
       .summary = "one-hop memory reader with sparsemax attention (an out-of-tree example)",
       .create = [](const nlohmann::json& c, memgrad::DType d,
                    uint64_t s) { return std::make_unique<SparseReader>(c, d, s); },
       .default_config = defaults(),
       .train_defaults = {{"optimizer", "adam"}, {"lr", 1e-2}, {"batch", 16}, {"iterations", 50}},
       // Two variants over one check batch (3 samples, 4 slots, width 6, targets in {0, 1}).
       .check_configs = {{{"variant", "classes2"}, {"width", 6}, {"classes", 2}},
                         {{"variant", "classes3"}, {"width", 6}, {"classes", 3}}},
       .check_batch =
           [](memgrad::Rng& rng, memgrad::DType dtype, memgrad::Batch& batch) {
             make_toy_batch(rng, dtype, 3, 4, 6, 2, batch);  // targets valid for both
           }});
  return true;
}();

}  // namespace
}  // namespace custom
