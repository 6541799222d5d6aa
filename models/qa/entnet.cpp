// Recurrent Entity Network; see models/qa/entnet.hpp and docs/entnet.md.
#include "models/qa/entnet.hpp"
#include "models/qa/memory_batch.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "models/layers/config.hpp"
#include "models/qa/babi_check.hpp"
#include "ops/ops.hpp"

namespace memgrad {
namespace {

const char* kName = "entnet";

// Every hyper-parameter with the official code's default for bAbI 10k single-task training.
// vocab_size, sentence_len and memory_size are the data's sizes: the task's model_dims() sets them
// (the values here are those of bAbI task 1, en).
const nlohmann::json kDefaults = {
    {"vocab_size", 20},      // words including nil (id 0); the keys' rows come after them
    {"sentence_len", 6},     // J: words per sentence (padded)
    {"memory_size", 70},     // the task's sentences per question (the official cap T = 70)
    {"embedding_dim", 100},  // d
    {"memory_slots", 20},    // K: memory slots, each with its key
    {"gate_bias", true},     // the official per-slot gate bias b_j; false: none, as the paper
    {"init_std", 0.1},       // N(0, 0.1^2) for E, U, V, W, H, R and the gate bias
    {"prelu_init", 1.0},     // the PReLU slopes' starting value (official 1; Torch's default 0.25)
    // eps inside the norm of the per-slot normalisation h / sqrt(|h|^2 + eps); the official code
    // divides by |h| itself (and by 1 for a zero row).
    {"norm_eps", 1e-12},
    {"loss", "sum"},  // "sum" over the batch (official) or "mean"
};

// Settings of the babi task the recipe sets: the official code keeps the last 70 sentences of a
// story before each question.
const nlohmann::json kTaskSettings = {{"babi", {{"memory_size", 70}}}};

}  // namespace

EntNet::EntNet(const nlohmann::json& user, DType dtype, uint64_t seed)
    : Model(dtype), config_(layers::merge_config(kName, kDefaults, user)) {
  const nlohmann::json& c = config_;
  vocab_ = layers::config_int(c, kName, "vocab_size", 2);
  sentence_len_ = layers::config_int(c, kName, "sentence_len");
  layers::config_int(c, kName, "memory_size");
  dim_ = layers::config_int(c, kName, "embedding_dim");
  slots_ = layers::config_int(c, kName, "memory_slots");
  gate_bias_ = c.at("gate_bias").get<bool>();
  const double init_std = c.at("init_std").get<double>();
  MG_CHECK(init_std > 0, kName, ": init_std must be > 0, got ", init_std);
  const double prelu_init = c.at("prelu_init").get<double>();
  norm_eps_ = c.at("norm_eps").get<double>();
  MG_CHECK(norm_eps_ > 0, kName, ": norm_eps must be > 0, got ", norm_eps_);
  const std::string loss = c.at("loss").get<std::string>();
  MG_CHECK(loss == "sum" || loss == "mean", kName, ": loss must be \"sum\" or \"mean\", got \"",
           loss, "\"");
  sum_loss_ = loss == "sum";

  Rng rng(seed);
  const int64_t d = dim_;
  embed_ = &params_.add_normal("E", Shape{vocab_ + slots_, d}, init_std, rng);
  story_mask_ = &params_.add("story_mask", Shape{sentence_len_, d});
  story_mask_->value.fill(1.0);  // plain bag of words at the start
  query_mask_ = &params_.add("query_mask", Shape{sentence_len_, d});
  query_mask_->value.fill(1.0);
  if (gate_bias_) bias_ = &params_.add_normal("gate_bias", Shape{slots_}, init_std, rng);
  u_ = &params_.add_normal("U", Shape{d, d}, init_std, rng);
  u_bias_ = &params_.add_normal("U.b", Shape{d}, init_std, rng);
  v_ = &params_.add_normal("V", Shape{d, d}, init_std, rng);
  w_ = &params_.add_normal("W", Shape{d, d}, init_std, rng);
  prelu_ = &params_.add("prelu", Shape{d});
  prelu_->value.fill(prelu_init);
  h_ = &params_.add_normal("H", Shape{d, d}, init_std, rng);
  out_prelu_ = &params_.add("out_prelu", Shape{d});
  out_prelu_->value.fill(prelu_init);
  r_ = &params_.add_normal("R", Shape{d, vocab_}, init_std, rng);
  after_update();
}

void EntNet::after_update() {
  MG_DISPATCH(embed_->value.dtype(), T, {
    T* e = embed_->value.data<T>();
    std::fill(e, e + dim_, T(0));  // E[0]: the nil word
    T* r = r_->value.data<T>();
    for (int64_t k = 0; k < dim_; ++k) r[k * vocab_] = T(0);  // R[:, 0]
  });
}

namespace {

// "t<step><suffix>", a trace name (appended piece by piece: g++ 12 warns falsely, -Wrestrict, on
// "t" + std::to_string(step)).
std::string step_name(int64_t step, const char* suffix) {
  std::string name = "t";
  name += std::to_string(step);
  name += suffix;
  return name;
}

// The batch's ids as whole numbers in [0, vocab); an Error names the field otherwise.
void check_ids(const Tensor& t, int64_t vocab, const char* field) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double id = t.at(i);
    MG_CHECK(id >= 0 && id < double(vocab) && id == std::floor(id), kName, ": batch field '", field,
             "' holds ", id, ", not a word id in [0, ", vocab, ")");
  }
}

// s = sum_i f_i (.) E[x_i] over the last id axis: ids [..., J], E [rows, d], f [J, d] -> [..., d].
// The nil word's row is zero, so padding words add nothing.
Var encode(Var table, Var ids, Var mask) {
  const int axis = ids.shape().rank - 1;
  return sum_axis(mul(gather_rows(table, ids), mask), axis);
}

}  // namespace

ForwardResult EntNet::forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) {
  const DType dtype = params_.dtype();
  const qa::MemoryBatch in = qa::read_memory_batch(batch, kName, sentence_len_, dtype);
  const Tensor &story = in.story, &mask = in.memory_mask, &query = in.query, &answer = in.answer;
  const int64_t b = in.b, steps = in.m, j = in.j;
  check_ids(story, vocab_, "story");
  check_ids(query, vocab_, "query");
  check_ids(answer, vocab_, "answer");

  // Time-major copies, so that sentence t of every sample is one contiguous [B, ...] block:
  // ids [T, B, J] and the mask [T, B, 1, 1], in constants' reused slots.
  const int64_t d = dim_, k = slots_;
  const Var ids = tape.constant(Shape{steps, b, j}, dtype, 0.0);
  const Var live = tape.constant(Shape{steps, b, 1, 1}, dtype, 0.0);
  {
    Tensor& ti = tape.value(ids.id);
    Tensor& tm = tape.value(live.id);
    for (int64_t s = 0; s < b; ++s)
      for (int64_t t = 0; t < steps; ++t) {
        for (int64_t w = 0; w < j; ++w)
          ti.set((t * b + s) * j + w, story.at((s * steps + t) * j + w));
        tm.set(t * b + s, mask.at(s * steps + t) != 0 ? 1.0 : 0.0);
      }
  }

  const Var table = tape.param(*embed_);
  // s_t for every t at once, and q: [T, B, d], [B, d].
  const Var sent = encode(table, ids, tape.param(*story_mask_));
  const Var q = encode(table, tape.input(query), tape.param(*query_mask_));
  // The keys w_j: rows V .. V + K - 1 of E, [K, d].
  const Var keys = slice(table, 0, vocab_, k);
  // The terms of the gate and the candidate that do not depend on h, for every t in one GEMM each:
  //   sw[t, b, j] = s_t . w_j + b_j     [T, B, K]
  //   sv[t, b]    = s_t V               [T, B, d]
  //   kw[j]       = w_j W + b_U         [K, d]
  Var sw = matmul(sent, transpose(keys));
  if (gate_bias_) sw = add(sw, tape.param(*bias_));
  const Var sv = matmul(sent, tape.param(*v_));
  const Var kw = addmm(tape.param(*u_bias_), keys, tape.param(*w_));
  const Var u = tape.param(*u_), slope = tape.param(*prelu_);

  // h^0_j = w_j for every sample: [B, K, d].
  Var h = add(tape.constant(Shape{b, k, d}, dtype, 0.0), keys);
  for (int64_t t = 0; t < steps; ++t) {
    const Var s_t = reshape(slice(sent, 0, t, 1), Shape{b, d, 1});
    // g_j = sigmoid(s_t . h_j + s_t . w_j + b_j)                       [B, K, 1]
    const Var g = sigmoid(add(bmm(h, s_t), reshape(slice(sw, 0, t, 1), Shape{b, k, 1})));
    // h~_j = PReLU(h_j U + b_U + w_j W + s_t V)                         [B, K, d]
    const Var fixed = add(kw, reshape(slice(sv, 0, t, 1), Shape{b, 1, d}));
    const Var cand = prelu(addmm(fixed, h, u), slope);
    // h_j <- (h_j + g_j h~_j) / ||h_j + g_j h~_j||, where sentence t is real
    const Var fresh = normalize(add(h, mul(g, cand)), norm_eps_);
    h = where(reshape(slice(live, 0, t, 1), Shape{b, 1, 1}), fresh, h);
    if (opts.trace) opts.trace->record(step_name(t, "/gate"), reshape(g, Shape{b, k}).value());
  }

  // p_j = softmax_j(q . h_j),  u = sum_j p_j h_j                         [B, K], [B, d]
  const Var p = softmax(reshape(bmm(h, reshape(q, Shape{b, d, 1})), Shape{b, k}));
  if (opts.trace) opts.trace->record("attention", p.value());
  const Var read = reshape(bmm(reshape(p, Shape{b, 1, k}), h), Shape{b, d});
  // logits = PReLU'(q + u H) R                                            [B, V]
  const Var y = prelu(addmm(q, read, tape.param(*h_)), tape.param(*out_prelu_));
  ForwardResult r;
  r.predictions = matmul(y, tape.param(*r_));
  r.loss = cross_entropy(r.predictions, tape.input(answer));
  if (sum_loss_) r.loss = scale(r.loss, double(b));
  return r;
}

namespace {

// The bAbI check batch's sizes (qa/babi_check.hpp) with tiny model dimensions.
nlohmann::json check_config(const char* variant) {
  nlohmann::json c = qa::babi_check_dims();
  c["variant"] = variant;
  c["embedding_dim"] = 4;
  c["memory_slots"] = 3;
  c["init_std"] = 0.5;
  // Slopes away from 1, so that the PReLUs' kinks are in the checked function.
  c["prelu_init"] = 0.25;
  return c;
}

const bool kRegistered = [] {
  nlohmann::json paper = check_config("no-gate-bias");
  paper["gate_bias"] = false;
  nlohmann::json mean = check_config("mean-loss-official-slopes");
  mean["loss"] = "mean";
  mean["prelu_init"] = 1.0;
  register_model(
      {.name = kName,
       .summary = "Recurrent Entity Network (Henaff et al. 2017), official Torch recipe: 20 "
                  "gated memory slots with tied keys, PReLU candidate, per-slot normalisation; "
                  "bAbI QA",
       .create = [](const nlohmann::json& config, DType dtype, uint64_t seed)
           -> std::unique_ptr<Model> { return std::make_unique<EntNet>(config, dtype, seed); },
       .default_config = kDefaults,
       .train_defaults = {{"optimizer", "adam"},
                          {"lr", 0.01},
                          {"batch", 32},
                          {"epochs", 200},
                          {"clip_norm", 40.0},
                          {"lr_halve_every_epochs", 25}},
       .check_configs = {check_config("official"), paper, mean},
       .check_batch = qa::make_babi_check_batch,
       .task_settings = kTaskSettings});
  return true;
}();

}  // namespace
}  // namespace memgrad
