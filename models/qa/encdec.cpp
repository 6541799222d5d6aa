// The LSTM encoder-decoder bAbI baseline (see encdec.hpp).
#include "models/qa/encdec.hpp"

#include "models/layers/batch_fields.hpp"
#include "models/layers/config.hpp"
#include "models/layers/lstm_runner.hpp"
#include "ops/ops.hpp"

namespace memgrad {
namespace {

constexpr const char* kName = "encdec";

const nlohmann::json kDefaults = {
    {"vocab_size", 175},  // set by the task (the words view's vocabulary, nil at 0)
    {"embedding", 50},
    {"hidden", 100},
    {"pack_rows", true}};  // compute only the rows still reading (same values, less work)

}  // namespace

EncDec::EncDec(const nlohmann::json& config, DType dtype, uint64_t seed) : Model(dtype) {
  config_ = layers::merge_config(kName, kDefaults, config);
  const int64_t V = layers::config_int(config_, kName, "vocab_size");
  const int64_t E = layers::config_int(config_, kName, "embedding");
  const int64_t H = layers::config_int(config_, kName, "hidden");
  pack_rows_ = config_.at("pack_rows").get<bool>();
  Rng rng(seed);
  embed_ = layers::Embedding(params_, "embedding", V, E, rng);
  cell_.emplace_back(params_, "enc.lstm", E, H, rng);
  out_ = layers::Linear(params_, "out", H, V, rng);
}

ForwardResult EncDec::forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) {
  const Tensor& words = layers::field(batch, kName, "words", 2);
  const Tensor& mask = layers::field(batch, kName, "words_mask", 2);
  const Tensor& answer = layers::field(batch, kName, "answer", 1);
  const int64_t B = words.dim(0);
  layers::expect_shape(kName, "words_mask", mask, words.shape());
  layers::expect_shape(kName, "answer", answer, Shape{B});
  const LstmCell& cell = cell_.front();
  const LstmState last = layers::run_lstm(
      tape, layers::TokenLstm(tape, embed_, cell), tape.input(words), tape.input(mask),
      cell.zero_state(tape, B, words.dtype()), 0.0, pack_rows_ && !opts.trace);
  if (opts.trace) opts.trace->record("h_T", last.h.value());
  ForwardResult r;
  r.predictions = out_(tape, last.h);
  r.loss = cross_entropy(r.predictions, tape.input(answer));
  return r;
}

namespace {

// A tiny words-view batch: B = 3 sequences of 5, 2 and 4 tokens (vocab 7) padded to T = 5.
void make_check_batch(Rng& rng, DType dtype, Batch& batch) {
  const int64_t b = 3, t = 5, vocab = 7;
  const int64_t lengths[3] = {5, 2, 4};
  Tensor& words = batch.field("words", Shape{b, t}, dtype);
  Tensor& mask = batch.field("words_mask", Shape{b, t}, dtype);
  Tensor& answer = batch.field("answer", Shape{b}, dtype);
  for (int64_t s = 0; s < b; ++s) {
    for (int64_t k = 0; k < lengths[s]; ++k) {
      words.set(s * t + k, double(1 + rng.below(uint64_t(vocab - 1))));
      mask.set(s * t + k, 1);
    }
    answer.set(s, double(1 + rng.below(uint64_t(vocab - 1))));
  }
  batch.size = b;
}

nlohmann::json check_config(const char* variant, bool pack) {
  return {{"variant", variant},
          {"vocab_size", 7},
          {"embedding", 3},
          {"hidden", 4},
          {"pack_rows", pack}};
}

const bool kRegistered = [] {
  register_model(
      {.name = kName,
       .summary = "LSTM encoder-decoder bAbI baseline (AMN Table 1 EncDec): one LSTM over the "
                  "story prefix and question words, softmax answer; task babi --babi-view words",
       .create = [](const nlohmann::json& config, DType dtype, uint64_t seed)
           -> std::unique_ptr<Model> { return std::make_unique<EncDec>(config, dtype, seed); },
       .default_config = kDefaults,
       .train_defaults = {{"optimizer", "adam"},
                          {"lr", 1e-3},
                          {"batch", 32},
                          {"epochs", 30},
                          {"iterations", 0},
                          {"clip_norm", 5.0}},
       .check_configs = {check_config("packed", true), check_config("unpacked", false)},
       .check_batch = make_check_batch,
       .task_settings = {{"babi", {{"babi_view", "words"}}}}});
  return true;
}();

}  // namespace
}  // namespace memgrad
