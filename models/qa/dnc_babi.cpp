// The DNC on bAbI's story view; the design is documented in dnc_babi.hpp.
#include "models/qa/dnc_babi.hpp"

#include <cstdio>
#include <string>

#include "models/layers/batch_fields.hpp"
#include "models/layers/config.hpp"
#include "models/layers/lstm_runner.hpp"
#include "ops/ops.hpp"

namespace memgrad {
namespace {

constexpr const char* kName = "dnc-babi";

// The DNC paper's usage gradient, as the zoo's other DNCs (models/dnc/dmnc.hpp, "Usage gradient").
constexpr dnc::UsageGradient kUsageGradient = dnc::UsageGradient::through_write_weights;

const nlohmann::json kDefaults = {{"vocab_size", 160},  // set by the task
                                  {"embedding", 64},     {"hidden", 256},
                                  {"memory_slots", 256}, {"word_size", 64},
                                  {"read_heads", 4},     {"clip_controller", 20.0}};

}  // namespace

DncBabi::DncBabi(const nlohmann::json& config, DType dtype, uint64_t seed) : Model(dtype) {
  config_ = layers::merge_config(kName, kDefaults, config);
  mem_.slots = layers::config_int(config_, kName, "memory_slots");
  mem_.word = layers::config_int(config_, kName, "word_size");
  mem_.read_heads = layers::config_int(config_, kName, "read_heads");
  vocab_ = layers::config_int(config_, kName, "vocab_size", 2);
  embedding_ = layers::config_int(config_, kName, "embedding");
  hidden_ = layers::config_int(config_, kName, "hidden");
  clip_ = config_.at("clip_controller").get<double>();
  MG_CHECK(clip_ >= 0, kName, ": config key 'clip_controller' must be >= 0 (0 = off), got ", clip_);
  const int64_t RW = mem_.read_heads * mem_.word;
  Rng rng(seed);
  embed_ = layers::Embedding(params_, "embedding", vocab_, embedding_, rng);
  cell_.emplace_back(params_, "lstm", embedding_ + RW, hidden_, rng);
  interface_ = layers::Linear(params_, "interface", hidden_, dnc::interface_size(mem_), rng);
  output_ = layers::Linear(params_, "output", hidden_ + RW, vocab_, rng);
}

ForwardResult DncBabi::forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) {
  const Tensor& words_t = layers::field(batch, kName, "words", 2);
  const int64_t B = words_t.dim(0), T = words_t.dim(1), RW = mem_.read_heads * mem_.word;
  const Tensor& slots_t = layers::field(batch, kName, "answer_slots", 2);
  const Tensor& answers_t = layers::field(batch, kName, "answers", 2);
  layers::expect_shape(kName, "answer_slots", slots_t, words_t.shape());
  layers::expect_shape(kName, "answers", answers_t, words_t.shape());
  const Var words = tape.input(words_t);
  const DType dtype = words.dtype();

  const layers::TokenLstm lstm(tape, embed_, cell_.front());
  LstmState ctrl = cell_.front().zero_state(tape, B, dtype);
  dnc::State mem = dnc::initial_state(tape, B, mem_, dtype);
  // [h_t ; r_t] of every position; per thread (shards run concurrently), its capacity kept so
  // that a step allocates nothing once the longest story has been read.
  thread_local std::vector<Var> outputs;
  outputs.clear();
  std::string prefix;
  for (int64_t t = 0; t < T; ++t) {
    if (opts.trace) {  // (snprintf: g++ 12 warns falsely on "t" + std::to_string(t))
      char name[32];
      std::snprintf(name, sizeof name, "t%lld/", static_cast<long long>(t));
      prefix = name;
    }
    Var reads = reshape(mem.read_vectors, Shape{B, RW});
    ctrl = layers::clip_state(lstm.step(tape, slice(words, 1, t, 1), reads, ctrl), clip_);
    const dnc::Interface iface = dnc::parse_interface(interface_(tape, ctrl.h), mem_);
    mem = dnc::step(mem, iface, true, opts.trace, prefix, kUsageGradient);
    outputs.push_back(concat({ctrl.h, reshape(mem.read_vectors, Shape{B, RW})}, 1));
  }
  ForwardResult r;
  r.predictions = output_(tape, stack(std::span<const Var>(outputs), 1));  // [B, T, V]
  r.loss = cross_entropy(r.predictions, tape.input(answers_t), tape.input(slots_t));
  for (int64_t i = 0; i < slots_t.numel(); ++i) r.loss_terms += slots_t.at(i) != 0 ? 1 : 0;
  return r;
}

namespace {

// A tiny batch of two stories of different lengths with slots, in the story view's fields: the
// second story ends early (padding), and a slot's answer id is a word the inputs never hold at
// that position.
void check_batch(Rng& rng, DType dtype, Batch& batch) {
  const int64_t B = 2, T = 5, V = 7;
  for (const char* f : {"words", "words_mask", "answer_slots", "answers"})
    batch.field(f, Shape{B, T}, dtype);
  Tensor& words = batch.field("words", Shape{B, T}, dtype);
  Tensor& mask = batch.field("words_mask", Shape{B, T}, dtype);
  Tensor& slots = batch.field("answer_slots", Shape{B, T}, dtype);
  Tensor& answers = batch.field("answers", Shape{B, T}, dtype);
  const int64_t length[B] = {5, 4};
  const bool slot[B][T] = {{false, false, true, false, true}, {false, true, false, true, false}};
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < length[b]; ++t) {
      const int64_t at = b * T + t;
      mask.set(at, 1);
      if (slot[b][t]) {
        words.set(at, 1);  // the slot word '-'
        slots.set(at, 1);
        answers.set(at, double(2 + rng.below(V - 2)));
      } else {
        words.set(at, double(2 + rng.below(V - 2)));
      }
    }
  batch.size = B;
}

nlohmann::json tiny(nlohmann::json extra) {
  nlohmann::json c = {{"vocab_size", 7}, {"embedding", 3},    {"hidden", 4},
                      {"word_size", 3},  {"memory_slots", 4}, {"read_heads", 2}};
  for (auto it = extra.begin(); it != extra.end(); ++it) c[it.key()] = *it;
  return c;
}

const bool kRegistered = [] {
  register_model(
      {.name = kName,
       .summary = "DNC reading whole bAbI stories, answering at each answer slot (Graves et al. "
                  "2016; --task babi --babi-view story)",
       .create = [](const nlohmann::json& c, DType d, uint64_t s) -> std::unique_ptr<Model> {
         return std::make_unique<DncBabi>(c, d, s);
       },
       .default_config = kDefaults,
       // The paper's bAbI recipe as reproduced in reference-notes 1.2: RMSProp lr 1e-4, momentum
       // 0.9, gradients clipped by value to +-10, one story a step, about 500k steps (8 epochs of
       // the 62k stories of joint en-10k).
       .train_defaults = {{"optimizer", "rmsprop"},
                          {"lr", 1e-4},
                          {"momentum", 0.9},
                          {"batch", 1},
                          {"epochs", 8},
                          {"clip_value", 10.0}},
       .check_configs = {tiny({{"variant", "two-heads"}}), tiny({{"variant", "one-head-unclipped"},
                                                                 {"read_heads", 1},
                                                                 {"clip_controller", 0.0}})},
       .check_batch = check_batch,
       // Whole stories with answer slots (tasks/babi_story.hpp): --task babi needs no flag.
       .task_settings = {{"babi", {{"babi_view", "story"}}}}});
  return true;
}();

}  // namespace
}  // namespace memgrad
