// Attention-weighted bag of words (see bow_attention.hpp).
#include "models/text/bow_attention.hpp"

#include "models/layers/config.hpp"
#include "models/layers/row_packing.hpp"
#include "models/text/text_inputs.hpp"
#include "ops/ops.hpp"

namespace memgrad::text {
namespace {

const char kWindowIndex = 0;

nlohmann::json defaults() {
  nlohmann::json d = task_dims();
  d["embedding"] = 192;  // paper section 4
  d["window"] = 2;
  d["scorer"] = "linear";  // the reference code's; "tanh": the planning notes' form
  d["attention"] = 64;     // the tanh scorer's hidden size
  d["dropout"] = 0.0;      // on the word embeddings, in training (ours; the reference has none)
  return d;
}

}  // namespace

BowAttention::BowAttention(const nlohmann::json& config, DType dtype, uint64_t seed)
    : Model(dtype) {
  config_ = layers::merge_config("bow-attention", defaults(), config);
  vocab_ = layers::config_int(config_, "bow-attention", "input_vocab", 2);
  labels_ = layers::config_int(config_, "bow-attention", "labels");
  const int64_t E = layers::config_int(config_, "bow-attention", "embedding");
  window_ = layers::config_int(config_, "bow-attention", "window", 0);
  const std::string scorer = config_.at("scorer").get<std::string>();
  MG_CHECK(scorer == "linear" || scorer == "tanh",
           "bow-attention: scorer must be linear or tanh, got '", scorer, "'");
  linear_ = scorer == "linear";
  attention_ = linear_ ? 1 : layers::config_int(config_, "bow-attention", "attention");
  dropout_ = layers::config_dropout(config_, "bow-attention");
  Rng rng(seed);
  embed_table_ =
      &params_.add_uniform("embed", Shape{vocab_, E}, -0.5 / double(E), 0.5 / double(E), rng);
  window_proj_ = layers::Linear(params_, "attn.w", E, (2 * window_ + 1) * attention_, rng, false);
  // A bias on a linear score would shift every word's score alike and cancel in the softmax.
  if (!linear_) {
    attn_bias_ = &params_.add("attn.b", Shape{attention_});
    attn_v_ = &params_.add_glorot("attn.v", Shape{attention_, 1}, rng);
  }
  out_ = layers::Linear(params_, "out", E, labels_, rng);
}

// P = X W (all offsets at once, [B*T, (2K+1) A]); offset k's share at word (b, t) is row
// b*T + t + k of block k when that word is in the note, a zero row otherwise (gather_rows from
// the block with a zero row appended).
ForwardResult BowAttention::forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) {
  const TextInputs in = read_inputs(tape, batch, name(), vocab_, labels_);
  const int64_t B = in.batch, T = in.steps, A = attention_, K = window_, E = out_.in();
  const DType dtype = in.ids.dtype();
  // Dropout on the looked-up embeddings (each element), in training: what keeps the table from
  // memorising the training notes (dropout on h alone did not, docs/results/codiesp.md).
  const Var x = dropout(gather_rows(tape.param(*embed_table_), in.ids), dropout_,
                        opts.training);  // [B, T, E]
  const Var p = window_proj_(tape, reshape(x, Shape{B * T, E}));
  const Var zero = tape.constant(Shape{1, A}, dtype, 0.0);
  std::vector<int64_t>& index = tape.index_scratch(&kWindowIndex);
  Var pre;
  for (int64_t k = -K; k <= K; ++k) {
    index.assign(size_t(B * T), B * T);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < in.lengths[size_t(b)]; ++t)
        if (t + k >= 0 && t + k < in.lengths[size_t(b)]) index[size_t(b * T + t)] = b * T + t + k;
    const Var block = concat({slice(p, 1, (k + K) * A, A), zero}, 0);
    const Var share = gather_rows(block, layers::index_leaf(tape, index, dtype));
    pre = pre.defined() ? add(pre, share) : share;
  }
  const Var scores =
      reshape(linear_ ? pre : matmul(tanh(add(pre, tape.param(*attn_bias_))), tape.param(*attn_v_)),
              Shape{B, T});
  // Padding positions: -1e30 before the softmax, so their weight is exactly 0.
  Var pad = tape.constant(Shape{B, T}, dtype, 0.0);
  Tensor& pv = tape.value(pad.id);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = in.lengths[size_t(b)]; t < T; ++t) pv.set(b * T + t, -1e30);
  const Var alpha = softmax(add(scores, pad));  // [B, T]
  if (opts.trace) opts.trace->record("alpha", alpha.value());
  const Var h = reshape(bmm(reshape(alpha, Shape{B, 1, T}), x), Shape{B, E});
  return multilabel_result(in, out_(tape, h));
}

namespace {

const bool kRegistered = [] {
  register_model(
      {.name = "bow-attention",
       .summary = "neural bag of words with attention from each word's neighbourhood (window "
                  "+-2, a linear score as the reference code's, or --scorer tanh), shared by all "
                  "labels (GRNN paper, section 4 baseline; task codiesp)",
       .create = [](const nlohmann::json& c, DType d,
                    uint64_t s) { return std::make_unique<BowAttention>(c, d, s); },
       .default_config = defaults(),
       .train_defaults = recurrent_train_defaults(),
       .check_configs = {{{"variant", "window-1"},
                          {"input_vocab", 7},
                          {"labels", 3},
                          {"embedding", 3},
                          {"window", 1}},
                         {{"variant", "tanh-scorer"},
                          {"input_vocab", 7},
                          {"labels", 3},
                          {"embedding", 3},
                          {"window", 1},
                          {"scorer", "tanh"},
                          {"attention", 2}},
                         {{"variant", "dropout"},
                          {"input_vocab", 7},
                          {"labels", 3},
                          {"embedding", 3},
                          {"window", 1},
                          {"dropout", 0.5}}},
       .check_batch = [](Rng& rng, DType dtype,
                         Batch& batch) { make_check_batch(rng, dtype, batch, 3, 4, 7, 3); },
       .config_before = {{"scorer", "tanh"}}});  // runs from before b0d8dd7 scored with tanh
  return true;
}();

}  // namespace
}  // namespace memgrad::text
