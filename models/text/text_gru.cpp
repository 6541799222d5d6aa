// GRU baselines (see text_gru.hpp).
#include "models/text/text_gru.hpp"

#include <cmath>

#include "models/layers/config.hpp"
#include "models/text/text_inputs.hpp"
#include "ops/ops.hpp"

namespace memgrad::text {
namespace {

nlohmann::json defaults(bool bidirectional) {
  nlohmann::json d = task_dims();
  d["embedding"] = 192;                    // paper section 4
  d["hidden"] = bidirectional ? 64 : 128;  // per direction
  d["bidirectional"] = bidirectional;
  // r and z start at sigmoid(1), as TensorFlow's GRUCell (the reference code's cell) and our grnn
  // start them: a new cell keeps 73 % of its state per word instead of half.
  d["gate_bias"] = 1.0;
  d["dropout"] = 0.0;  // on the word embeddings, in training (ours; the paper has none)
  return d;
}

}  // namespace

int64_t grnn_parameters(int64_t E, int64_t C, int64_t L) {
  const int64_t G = L + C;
  // W_x, W_c, W_cn, d, B, b of the cell, and the output bias b_l.
  return E * 3 * G + C * 3 * G + 3 * L + L * 3 * C + 3 * G + L;
}
int64_t gru_parameters(int64_t E, int64_t H, int64_t L) {
  return 3 * H * (E + H) + 3 * H + H * L + L;  // W_x, U, b; P, b_p
}
int64_t matched_gru_hidden(int64_t E, int64_t C, int64_t L) {
  // The largest hidden size whose GRU is no larger than the GRNN.
  const int64_t target = grnn_parameters(E, C, L);
  int64_t h = 1;
  while (gru_parameters(E, h + 1, L) <= target) ++h;
  return h;
}

TextGru::TextGru(const std::string& name, const nlohmann::json& config, DType dtype, uint64_t seed)
    : Model(dtype), name_(name) {
  config_ = layers::merge_config(name, defaults(name == "text-bigru"), config);
  vocab_ = layers::config_int(config_, name, "input_vocab", 2);
  labels_ = layers::config_int(config_, name, "labels");
  const int64_t E = layers::config_int(config_, name, "embedding");
  const int64_t H = layers::config_int(config_, name, "hidden");
  const bool bi = config_.at("bidirectional").get<bool>();
  const double gate_bias = config_.at("gate_bias").get<double>();
  dropout_ = layers::config_dropout(config_, name);
  Rng rng(seed);
  embed_table_ =
      &params_.add_uniform("embed", Shape{vocab_, E}, -0.5 / double(E), 0.5 / double(E), rng);
  forward_.emplace(params_, "gru", E, H, rng, gate_bias);
  if (bi) reverse_.emplace(params_, "reverse", E, H, rng, gate_bias);
  out_ = layers::Linear(params_, "out", bi ? 2 * H : H, labels_, rng);
}

ForwardResult TextGru::forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) {
  const TextInputs in = read_inputs(tape, batch, name_, vocab_, labels_);
  const Var table = tape.param(*embed_table_);
  std::vector<Var>* outs = nullptr;
  if (opts.trace && !reverse_) {
    outs = &tape.var_scratch(this);
    outs->clear();
  }
  const Var x = embed_words(tape, table, in, false, dropout_, opts.training);
  Var h = run_gru(tape, *forward_, forward_->project_inputs(x), in, 0, outs);
  if (outs)
    for (size_t t = 0; t < outs->size(); ++t)
      opts.trace->record(trace_name(t, "/p"), sigmoid(out_(tape, (*outs)[t])).value());
  if (reverse_) {
    const Var rev = embed_words(tape, table, in, true, dropout_, opts.training);
    h = concat({h, run_gru(tape, *reverse_, reverse_->project_inputs(rev), in, 1)}, 1);
  }
  return multilabel_result(in, out_(tape, h));
}

namespace {

nlohmann::json dropout_variant(nlohmann::json c) {
  c["variant"] = c["variant"].get<std::string>() + "-dropout";
  c["dropout"] = 0.5;
  return c;
}

void check_batch(Rng& rng, DType dtype, Batch& batch) {
  make_check_batch(rng, dtype, batch, 3, 4, 7, 3);
}

const bool kRegistered = [] {
  for (const char* name : {"text-gru", "text-bigru"}) {
    const bool bi = std::string(name) == "text-bigru";
    nlohmann::json tiny = {{"variant", bi ? "bidirectional" : "forward"},
                           {"input_vocab", 7},
                           {"labels", 3},
                           {"embedding", 3},
                           {"hidden", 2},
                           {"bidirectional", bi}};
    register_model(
        {.name = name,
         .summary = bi ? "bidirectional GRU baseline, 64 units each way, last states -> label "
                         "logits (GRNN paper, section 4; task codiesp)"
                       : "GRU baseline over word embeddings, last state -> label logits (GRNN "
                         "paper, section 4: hidden 128, or matched to GRNN's parameter count; "
                         "task codiesp)",
         .create = [name](const nlohmann::json& c, DType d,
                          uint64_t s) { return std::make_unique<TextGru>(name, c, d, s); },
         .default_config = defaults(bi),
         .train_defaults = recurrent_train_defaults(),
         .check_configs = {tiny, dropout_variant(tiny)},
         .check_batch = check_batch,
         .task_settings = curriculum_settings()});
  }
  return true;
}();

}  // namespace
}  // namespace memgrad::text
