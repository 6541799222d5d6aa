#include "models/layers/linear.hpp"

#include "ops/ops.hpp"

namespace memgrad::layers {

Linear::Linear(ParameterSet& params, const std::string& prefix, int64_t in, int64_t out, Rng& rng,
               bool bias)
    : in_(in), out_(out) {
  MG_CHECK(in > 0 && out > 0, "Linear '", prefix, "': sizes ", in, " x ", out, " must be positive");
  w_ = &params.add_glorot(prefix + ".w", Shape{in, out}, rng);
  if (bias) b_ = &params.add(prefix + ".b", Shape{out});
}

void Linear::init_bias(int64_t begin, int64_t count, double value) {
  MG_CHECK(b_ && begin >= 0 && count >= 0 && begin + count <= out_, "Linear::init_bias: entries [",
           begin, ", ", begin + count, ") of a layer with ", b_ ? out_ : 0, " bias entries");
  for (int64_t j = begin; j < begin + count; ++j) b_->value.set(j, value);
}

void Linear::init_weights_uniform(double limit, Rng& rng) {
  MG_CHECK(limit > 0, "Linear::init_weights_uniform: limit must be positive, got ", limit);
  for (int64_t i = 0; i < w_->value.numel(); ++i) w_->value.set(i, rng.uniform(-limit, limit));
}

Var Linear::operator()(Tape& tape, Var x) const {
  return b_ ? addmm(tape.param(*b_), x, tape.param(*w_)) : matmul(x, tape.param(*w_));
}

Embedding::Embedding(ParameterSet& params, const std::string& name, int64_t rows, int64_t dim,
                     Rng& rng)
    : rows_(rows), dim_(dim) {
  MG_CHECK(rows > 0 && dim > 0, "Embedding '", name, "': sizes ", rows, " x ", dim,
           " must be positive");
  table_ = &params.add_uniform(name, Shape{rows, dim}, -1.0, 1.0, rng);
}

Var Embedding::lookup(Var table, Var ids) const {
  MG_CHECK(table.defined() && table.dim(0) == rows_, table_->name,
           ": a table to look up must have ", rows_, " rows, got ",
           table.defined() ? table.shape().str() : "undefined");
  // gather_rows would reject the id too; here the message names the table, whose size is a
  // vocabulary setting of the model or its task.
  const Tensor& v = ids.value();
  for (int64_t i = 0; i < v.numel(); ++i)
    MG_CHECK(v.at(i) >= 0 && v.at(i) < double(rows_), table_->name, ": token id ", v.at(i),
             " (position ", i, " of ids of shape ", v.shape(), ") is not in [0, ", rows_,
             "): the data has more tokens than the embedding's vocabulary setting");
  return gather_rows(table, ids);
}

}  // namespace memgrad::layers
