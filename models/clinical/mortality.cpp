// Shared pieces of the in-hospital mortality models (see mortality.hpp).
#include "models/clinical/mortality.hpp"

#include "ops/ops.hpp"

namespace memgrad::mortality {

nlohmann::json task_dims() {
  return {{"input_size", 82}, {"feature_size", 230}, {"output_size", 1}, {"steps", 48}};
}

Var input(Tape& tape, const Batch& batch, const std::string& model, const std::string& name,
          const Shape& want) {
  MG_CHECK(batch.has(name), model, ": the batch has no field '", name, "'");
  const Tensor& t = batch.get(name);
  bool ok = t.rank() == want.rank + 1;
  for (int i = 0; ok && i < want.rank; ++i) ok = t.dim(i + 1) == want[i];
  MG_CHECK(ok, model, ": batch field '", name, "' must be [B, ", want.str().substr(1), ", got ",
           t.shape());
  return tape.input(t);
}

ForwardResult result(Tape& tape, const Batch& batch, const std::string& model, Var logits,
                     Var penalty) {
  MG_CHECK(batch.has("y"), model, ": the batch has no field 'y'");
  const Tensor& y = batch.get("y");
  MG_CHECK(y.shape() == logits.shape(), model, ": labels 'y' of shape ", y.shape(),
           " for logits of shape ", logits.shape());
  ForwardResult out;
  out.predictions = logits;
  out.loss = bce_with_logits(logits, tape.input(y));
  if (penalty.defined()) out.loss = add(out.loss, penalty);
  return out;
}

void make_check_batch(Rng& rng, DType dtype, Batch& batch, int64_t B, int64_t T, int64_t F,
                      int64_t S) {
  Tensor& x = batch.field("x", Shape{B, T, F}, dtype);
  Tensor& features = batch.field("features", Shape{B, S}, dtype);
  Tensor& y = batch.field("y", Shape{B, 1}, dtype);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, rng.normal());
  for (int64_t i = 0; i < features.numel(); ++i) features.set(i, rng.normal());
  for (int64_t b = 0; b < B; ++b) y.set(b, b % 2);  // both classes
  batch.size = B;
}

void register_model(const std::string& name, const std::string& summary, ModelFactory create,
                    nlohmann::json default_config, nlohmann::json train_defaults,
                    std::vector<nlohmann::json> check_configs) {
  memgrad::register_model({.name = name,
                           .summary = summary,
                           .create = std::move(create),
                           .default_config = std::move(default_config),
                           .train_defaults = std::move(train_defaults),
                           .check_configs = std::move(check_configs),
                           .check_batch = [](Rng& rng, DType dtype, Batch& batch) {
                             make_check_batch(rng, dtype, batch, 3, 4, 5, 6);
                           }});
}

}  // namespace memgrad::mortality
