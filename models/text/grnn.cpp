// GRNN and BiGRNN (see grnn.hpp).
#include "models/text/grnn.hpp"

#include "models/layers/config.hpp"
#include "models/layers/row_packing.hpp"
#include "models/text/text_inputs.hpp"
#include "ops/ops.hpp"

namespace memgrad::text {
namespace {

// The reference code's clamp: p (1 - 2 eps) + eps keeps log p and log(1 - p) finite.
constexpr double kEps = 1e-6;

nlohmann::json defaults(bool bidirectional) {
  nlohmann::json d = task_dims();
  d["embedding"] = 192;  // paper section 4
  d["control"] = 128;    // D_c (reference code's hidden size; matches the paper's 846 / 793)
  // The paper does not give the reverse GRU's size. 8 units won on CodiEsp dev over 128, at both
  // learning rates (docs/results/codiesp.md, "BiGRNN's reverse GRU chosen on dev"); 128 until
  // then (older runs keep theirs: config.json has the key).
  d["reverse_hidden"] = bidirectional ? 8 : 0;
  // The reverse GRU's r and z start at sigmoid(1), as TensorFlow's GRUCell (the reference code's
  // cell) and the grounded cell start theirs.
  if (bidirectional) d["reverse_gate_bias"] = 1.0;
  d["dropout"] = 0.0;  // on the word embeddings, in training (ours; the paper has none)
  return d;
}

}  // namespace

Grnn::Grnn(const std::string& name, const nlohmann::json& config, DType dtype, uint64_t seed)
    : Model(dtype), name_(name) {
  config_ = layers::merge_config(name, defaults(name == "bigrnn"), config);
  vocab_ = layers::config_int(config_, name, "input_vocab", 2);
  labels_ = layers::config_int(config_, name, "labels");
  const int64_t E = layers::config_int(config_, name, "embedding");
  const int64_t C = layers::config_int(config_, name, "control");
  const int64_t R = layers::config_int(config_, name, "reverse_hidden", 0);
  MG_CHECK((name == "bigrnn") == (R > 0), name, ": reverse_hidden must be ",
           name == "bigrnn" ? "positive" : "0", ", got ", R);
  dropout_ = layers::config_dropout(config_, name);
  Rng rng(seed);
  // Embeddings uniform +-0.5 / E, as the reference code initialises them.
  embed_table_ =
      &params_.add_uniform("embed", Shape{vocab_, E}, -0.5 / double(E), 0.5 / double(E), rng);
  if (R > 0)
    reverse_.emplace(params_, "reverse", E, R, rng, config_.at("reverse_gate_bias").get<double>());
  cell_.emplace(params_, "grnn", E + R, labels_, C, rng);
  bias_ = &params_.add("out.b", Shape{labels_});
}

// g_T -> logit(p) + b with p = ((g + 1) / 2)(1 - 2 eps) + eps; log(1 - p) from 1 - p written out
// as an affine function of g too.
ForwardResult Grnn::forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) {
  const TextInputs in = read_inputs(tape, batch, name_, vocab_, labels_);
  const int64_t B = in.batch, T = in.steps;
  const Var table = tape.param(*embed_table_);
  Var x = embed_words(tape, table, in, false, dropout_, opts.training);  // [T, B, E]
  if (reverse_) {
    std::vector<Var>& outs = tape.var_scratch(this);
    outs.clear();
    const Var rev = embed_words(tape, table, in, true, dropout_, opts.training);
    run_gru(tape, *reverse_, reverse_->project_inputs(rev), in, 0, &outs);
    x = concat({x, align_reversed(tape, outs, in)}, 2);
  }
  const GroundedGruCell& cell = *cell_;
  const int64_t G3 = 3 * (cell.labels() + cell.control());
  const Var flat = reshape(cell.project_inputs(x), Shape{T * B, G3});
  GroundedState s = cell.zero_state(tape, B, x.dtype());
  layers::RetiringRows rows(in.mask, 1);
  Var* fields[] = {&s.g, &s.c};
  for (int64_t t = 0; t < T; ++t) {
    const int64_t n = rows.begin_step(t, fields);
    if (n == 0) break;
    s = cell.step_projected(tape, slice(flat, 0, t * B, n), s);  // leading rows: a view
    if (opts.trace) opts.trace->record(trace_name(t, "/g"), s.g.value());
  }
  rows.finish(fields);
  const double a = 0.5 * (1 - 2 * kEps);
  const Var log_p = log(scale_shift(s.g, a, a + kEps));
  const Var log_q = log(scale_shift(s.g, -a, 1 - a - kEps));
  const Var logits = add(sub(log_p, log_q), tape.param(*bias_));
  return multilabel_result(in, logits);
}

namespace {

void check_batch(Rng& rng, DType dtype, Batch& batch) {
  make_check_batch(rng, dtype, batch, 3, 4, 7, 3);
}

nlohmann::json tiny(const char* variant, int64_t reverse, double dropout = 0) {
  return {{"variant", variant}, {"input_vocab", 7},          {"labels", 3},       {"embedding", 3},
          {"control", 2},       {"reverse_hidden", reverse}, {"dropout", dropout}};
}

const bool kRegistered = [] {
  for (const char* name : {"grnn", "bigrnn"}) {
    const bool bi = std::string(name) == "bigrnn";
    register_model(
        {.name = name,
         .summary = bi ? "bidirectional Grounded RNN: a reverse GRU's outputs beside the word "
                         "embeddings of the grounded GRU (GRNN paper, section 3; task codiesp)"
                       : "Grounded RNN: one hidden dimension per label, semi-diagonal GRU "
                         "updates, labels read from the last grounded state (GRNN paper, "
                         "section 3; task codiesp)",
         .create = [name](const nlohmann::json& c, DType d,
                          uint64_t s) { return std::make_unique<Grnn>(name, c, d, s); },
         .default_config = defaults(bi),
         .train_defaults = recurrent_train_defaults(),
         .check_configs = {bi ? tiny("bidirectional", 2) : tiny("grounded", 0),
                           bi ? tiny("bidirectional-dropout", 2, 0.5)
                              : tiny("grounded-dropout", 0, 0.5)},
         .check_batch = check_batch,
         .task_settings = curriculum_settings()});
  }
  return true;
}();

}  // namespace
}  // namespace memgrad::text
