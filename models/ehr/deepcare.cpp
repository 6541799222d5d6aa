// DeepCare (see deepcare.hpp).
#include "models/ehr/deepcare.hpp"

#include <cmath>

#include "engine/json_text.hpp"
#include "models/dnc/two_view.hpp"
#include "models/layers/batch_fields.hpp"
#include "models/layers/config.hpp"
#include "models/layers/rnn_cells.hpp"
#include "ops/ops.hpp"

namespace memgrad {
namespace {

nlohmann::json defaults() {
  return {{"input_vocab", 0}, {"input_vocab2", 0}, {"output_vocab", 0},   {"embedding", 20},
          {"hidden", 64},     {"output", "set"},   {"carry_state", true}, {"time_decay", true}};
}

// A constant [rows, 1] on the tape whose row r is f(r).
template <class F>
Var per_row(Tape& tape, int64_t rows, DType dtype, F&& f) {
  Var v = tape.constant(Shape{rows, 1}, dtype, 1.0);
  Tensor& t = tape.value(v.id);
  for (int64_t r = 0; r < rows; ++r) t.set(r, f(r));
  return v;
}

}  // namespace

DeepCare::DeepCare(const nlohmann::json& config, DType dtype, uint64_t seed) : Model(dtype) {
  config_ = layers::merge_config(name_, defaults(), config);
  MG_CHECK(config_.at("output") == "set", name_,
           ": output must be \"set\" (the next admission's "
           "diagnoses), got ",
           dump_json(config_.at("output")));
  const int64_t v1 = layers::config_int(config_, name_, "input_vocab"),
                v2 = layers::config_int(config_, name_, "input_vocab2"),
                labels = layers::config_int(config_, name_, "output_vocab"),
                E = layers::config_int(config_, name_, "embedding");
  hidden_ = layers::config_int(config_, name_, "hidden");
  carry_ = config_.at("carry_state").get<bool>();
  decay_ = config_.at("time_decay").get<bool>();
  Rng rng(seed);
  dx_ = layers::Embedding(params_, "embed.dx", v1, E, rng);
  proc_ = layers::Embedding(params_, "embed.proc", v2, E, rng);
  gates_ = layers::Linear(params_, "gates", 2 * E + hidden_, 3 * hidden_, rng);
  gates_.init_bias(hidden_, hidden_, 1.0);  // forget bias 1, as the zoo's LSTMs
  candidate_ = layers::Linear(params_, "candidate", E + hidden_, hidden_, rng);
  out_ = layers::Linear(params_, "out", hidden_, labels, rng);
}

Var DeepCare::masked_mean(Tape& tape, const layers::Embedding& table, const Tensor& ids,
                          const Tensor& mask) const {
  const int64_t B = ids.dim(0), L = ids.dim(1);
  Var e = table(tape, tape.input(ids));  // [B, L, E]
  Var m = reshape(tape.input(mask), Shape{B, L, 1});
  Var inv = per_row(tape, B, ids.dtype(), [&](int64_t r) {
    double n = 0;
    for (int64_t t = 0; t < L; ++t) n += mask.at(r * L + t);
    return 1.0 / std::max(n, 1.0);
  });
  return mul(sum_axis(mul(e, m), 1), inv);  // [B, E]
}

ForwardResult DeepCare::forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) {
  const Tensor& x1 = layers::field(batch, name_, "x1", 2);
  const Tensor& m1 = layers::field(batch, name_, "x1_mask", 2);
  const Tensor& x2 = layers::field(batch, name_, "x2", 2);
  const Tensor& m2 = layers::field(batch, name_, "x2_mask", 2);
  const Tensor& labels = layers::field(batch, name_, "labels", 2);
  layers::expect_shape(name_, "x1_mask", m1, x1.shape());
  layers::expect_shape(name_, "x2_mask", m2, x2.shape());
  const int64_t B = x1.dim(0), H = hidden_, L1 = x1.dim(1);
  const DType dtype = x1.dtype();
  MG_CHECK(x2.dim(0) == B, name_, ": batch field 'x2' has ", x2.dim(0), " rows, 'x1' ", B);
  const Tensor* start = batch.has("patient_start") ? &batch.get("patient_start") : nullptr;
  if (start) layers::expect_shape(name_, "patient_start", *start, Shape{B});
  const Tensor* gap = batch.has("gap_days") ? &batch.get("gap_days") : nullptr;
  if (gap) layers::expect_shape(name_, "gap_days", *gap, Shape{B});

  // The previous state: carried when the rows continue their patients, else zero.
  bool all_start = !start;
  if (start) {
    all_start = true;
    for (int64_t r = 0; r < B; ++r) all_start = all_start && start->at(r) != 0;
  }
  Carried& prev = carried_[size_t(current_)];
  const bool carried = carry_ && valid_ && !all_start;
  // Continuing the graph (models/unroll.hpp): the previous forward's Vars instead of its values.
  const bool continues = carried && opts.continues_graph;
  Var h_prev, c_prev, sum_prev;
  if (carried) {
    MG_CHECK(prev.state[0].dim(0) == B && prev.state[0].dtype() == dtype, name_,
             ": the carried state has ", prev.state[0].dim(0), " rows but the batch ", B,
             " (one patient per row)");
    MG_CHECK(!continues || graph_state_[0].tape == &tape, name_,
             ": a forward that continues the graph needs a previous forward on the same tape");
    bool some_start = false;
    for (int64_t r = 0; r < B; ++r)
      if (start->at(r) != 0) {  // a new patient in this row: its state from zero
        for (Tensor& t : prev.state)
          for (int64_t j = 0; j < H; ++j) t.set(r * H + j, 0);
        prev.count[size_t(r)] = 0;
        some_start = true;
      }
    if (continues) {
      const Var zero = tape.constant(Shape{B, H}, dtype, 0.0);
      const Var start_rows = reshape(tape.input(*start), Shape{B, 1});
      Var* prevs[3] = {&h_prev, &c_prev, &sum_prev};
      for (size_t k = 0; k < 3; ++k)
        *prevs[k] = some_start ? where(start_rows, zero, graph_state_[k]) : graph_state_[k];
    } else {
      h_prev = tape.input(prev.state[0]);
      c_prev = tape.input(prev.state[1]);
      sum_prev = tape.input(prev.state[2]);
    }
  } else {
    h_prev = tape.constant(Shape{B, H}, dtype, 0.0);
    c_prev = h_prev;
    sum_prev = h_prev;
  }
  auto count_before = [&](int64_t r) { return carried ? prev.count[size_t(r)] : 0.0; };
  auto active = [&](int64_t r) {
    for (int64_t t = 0; t < L1; ++t)
      if (m1.at(r * L1 + t) != 0) return true;
    return false;
  };

  const Var x = masked_mean(tape, dx_, x1, m1), p = masked_mean(tape, proc_, x2, m2);
  const Var z = sigmoid(gates_(tape, concat({x, p, h_prev}, 1)));  // [B, 3H]: i, f, o
  Var f = slice(z, 1, H, H);
  if (decay_ && gap)
    f = mul(f, per_row(tape, B, dtype, [&](int64_t r) {
              return 1.0 / std::log(std::exp(1.0) + std::max(0.0, gap->at(r)));
            }));
  const Var cand = tanh(candidate_(tape, concat({x, h_prev}, 1)));
  const Var is_active = per_row(tape, B, dtype, [&](int64_t r) { return active(r) ? 1.0 : 0.0; });
  const Var c = where(is_active, add(mul(f, c_prev), mul(slice(z, 1, 0, H), cand)), c_prev);
  const Var h = where(is_active, mul(slice(z, 1, 2 * H, H), tanh(c)), h_prev);
  const Var sum_h = where(is_active, add(sum_prev, h), sum_prev);
  const Var inv_count = per_row(tape, B, dtype, [&](int64_t r) {
    return 1.0 / std::max(1.0, count_before(r) + (active(r) ? 1 : 0));
  });
  ForwardResult result;
  result.predictions = out_(tape, mul(sum_h, inv_count));  // [B, V]
  layers::expect_shape(name_, "labels", labels, result.predictions.shape());
  if (batch.has("labels_mask")) {
    const Tensor& scored = batch.get("labels_mask");
    layers::expect_shape(name_, "labels_mask", scored, Shape{B});
    result.loss = bce_with_logits(result.predictions, tape.input(labels), tape.input(scored));
  } else {
    result.loss = bce_with_logits(result.predictions, tape.input(labels));
  }

  if (carry_) {
    // Values into the other buffer (this one's tensors are the tape's leaves), or, after a forward
    // that continued the graph and so read no values, into this one: the other may hold an
    // earlier forward's leaves on this tape, whose backward is still to come.
    const bool in_place = opts.continues_graph;
    Carried& next = carried_[size_t(in_place ? current_ : 1 - current_)];
    const Var vars[3] = {h, c, sum_h};
    for (size_t k = 0; k < 3; ++k) {
      if (!next.state[k].defined() || next.state[k].shape() != Shape{B, H} ||
          next.state[k].dtype() != dtype)
        next.state[k] = Tensor::zeros(Shape{B, H}, dtype);
      next.state[k].copy_from(vars[k].value());
    }
    next.count.resize(size_t(B));
    for (int64_t r = 0; r < B; ++r) next.count[size_t(r)] = count_before(r) + (active(r) ? 1 : 0);
    if (!in_place) current_ = 1 - current_;
    valid_ = true;
    graph_state_ = {h, c, sum_h};
  }
  return result;
}

namespace {

const bool kRegistered = [] {
  nlohmann::json tiny = {{"variant", "decay, carried off (every row starts)"},
                         {"input_vocab", 7},
                         {"input_vocab2", 5},
                         {"output_vocab", 9},
                         {"embedding", 3},
                         {"hidden", 4}};
  nlohmann::json flat = tiny;
  flat["variant"] = "no time decay";
  flat["time_decay"] = false;
  nlohmann::json unrolled = tiny;  // two admissions on one tape: the gradient through h, c, sum
  unrolled["variant"] = "unrolled";
  unrolled["admissions"] = 2;
  register_model(
      {.name = "deepcare",
       .summary = "DeepCare: an LSTM over a patient's admissions with a time-decayed forget "
                  "gate, mean-pooled code embeddings of both views, the mean of the history's "
                  "states predicting the next admission's diagnoses (DMNC paper, Table 5 "
                  "baseline; task mimic-progression)",
       .create = [](const nlohmann::json& c, DType d,
                    uint64_t s) { return std::make_unique<DeepCare>(c, d, s); },
       .default_config = defaults(),
       .train_defaults =
           {{"optimizer", "adam"}, {"lr", 1e-2}, {"batch", 16}, {"epochs", 40}, {"iterations", 0}},
       .check_configs = {tiny, flat, unrolled},
       .check_batch =
           [](Rng& rng, DType dtype, Batch& batch) {
             dnc::make_check_batch(rng, dtype, batch, 7, 9, 5);
             Tensor& gap = batch.field("gap_days", Shape{2}, dtype);
             gap.set(0, 3), gap.set(1, 400);
             // Row 0 continues its patient, row 1 starts anew (the unrolled variant's restart).
             Tensor& start = batch.field("patient_start", Shape{2}, dtype);
             start.set(0, 0), start.set(1, 1);
           }});
  return true;
}();

}  // namespace
}  // namespace memgrad
