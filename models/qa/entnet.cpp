// Recurrent Entity Network; see models/qa/entnet.hpp and docs/entnet.md.
#include "models/qa/entnet.hpp"
#include "models/qa/memory_batch.hpp"

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <vector>

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
    // The story encoder's position mask at the start: "normal", N(0, init_std^2), which is what
    // the official code trains with (its reset() draws every weight from the normal and then sets
    // to 1 only the modules named 'q_embed1', the question's mask, not 's_embed1', the story's);
    // "ones": a plain bag of words, as the paper and the question's mask (the default, and every
    // table, before 2026-11-28).
    {"story_mask_init", "normal"},
    // One set of PReLU slopes for the candidate and the output (true), as the official code (both
    // modules are annotated 'prelu', and share_modules ties everything of one name) and the
    // TensorFlow port (one alpha) train; false: two sets, "prelu" and "out_prelu" (the default
    // before 2026-11-28).
    {"shared_prelu", true},
    // eps inside the norm of the per-slot normalisation h / sqrt(|h|^2 + eps); the official code
    // divides by |h| itself (and by 1 for a zero row).
    {"norm_eps", 1e-12},
    {"loss", "sum"},  // "sum" over the batch's questions (official) or "mean"
    // One pass per story answering all its questions (the babi view "memory-story" sets it, with
    // its batch fields); false: one window per question (the memory view). entnet.hpp.
    {"per_story", false},
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
  sum_loss_ = layers::config_choice(c, kName, "loss", {"sum", "mean"}) == "sum";
  per_story_ = c.at("per_story").get<bool>();
  const std::string story_mask_init =
      layers::config_choice(c, kName, "story_mask_init", {"ones", "normal"});

  Rng rng(seed);
  const int64_t d = dim_;
  embed_ = &params_.add_normal("E", Shape{vocab_ + slots_, d}, init_std, rng);
  if (story_mask_init == "normal") {
    story_mask_ = &params_.add_normal("story_mask", Shape{sentence_len_, d}, init_std, rng);
  } else {
    story_mask_ = &params_.add("story_mask", Shape{sentence_len_, d});
    story_mask_->value.fill(1.0);  // plain bag of words at the start
  }
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
  if (c.at("shared_prelu").get<bool>()) {
    out_prelu_ = prelu_;
  } else {
    out_prelu_ = &params_.add("out_prelu", Shape{d});
    out_prelu_->value.fill(prelu_init);
  }
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

// The memory pass over sentences story [B, T, J] (mask [B, T]): h after the last sentence,
// [B, K, d]. With `states`, also h^0 and h after each sentence (T + 1 of them, in order).
Var EntNet::memory_pass(Tape& tape, const Tensor& story, const Tensor& mask,
                        const ForwardOptions& opts, std::vector<Var>* states) {
  const DType dtype = params_.dtype();
  const int64_t b = story.dim(0), steps = story.dim(1), j = story.dim(2);
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
  // s_t for every t at once: [T, B, d].
  const Var sent = encode(table, ids, tape.param(*story_mask_));
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
  if (states) states->push_back(h);
  for (int64_t t = 0; t < steps; ++t) {
    Temporaries temps(tape);  // the gate's and candidate's pieces die once h is made
    const Var s_t = reshape(slice(sent, 0, t, 1), Shape{b, d, 1});
    // g_j = sigmoid(s_t . h_j + s_t . w_j + b_j)                       [B, K, 1]
    const Var g = sigmoid(add(bmm(h, s_t), reshape(slice(sw, 0, t, 1), Shape{b, k, 1})));
    // h~_j = PReLU(h_j U + b_U + w_j W + s_t V)                         [B, K, d]
    const Var fixed = add(kw, reshape(slice(sv, 0, t, 1), Shape{b, 1, d}));
    const Var cand = prelu(addmm(fixed, h, u), slope);
    // h_j <- (h_j + g_j h~_j) / ||h_j + g_j h~_j||, where sentence t is real
    const Var fresh = normalize(add(h, mul(g, cand)), norm_eps_);
    h = temps.keep(where(reshape(slice(live, 0, t, 1), Shape{b, 1, 1}), fresh, h));
    if (states) states->push_back(h);
    if (opts.trace) opts.trace->record(step_name(t, "/gate"), reshape(g, Shape{b, k}).value());
  }
  return h;
}

// The output module for N questions q [N, d], each reading its memories h [N, K, d]: the answer
// scores [N, V], and the attention p [N, K] in `attention`.
Var EntNet::answer_scores(Tape& tape, Var h, Var q, Var& attention) {
  const int64_t n = q.shape()[0], d = dim_, k = slots_;
  // p_j = softmax_j(q . h_j),  u = sum_j p_j h_j                         [N, K], [N, d]
  const Var p = softmax(reshape(bmm(h, reshape(q, Shape{n, d, 1})), Shape{n, k}));
  attention = p;
  const Var read = reshape(bmm(reshape(p, Shape{n, 1, k}), h), Shape{n, d});
  // logits = PReLU'(q + u H) R                                            [N, V]
  const Var y = prelu(addmm(q, read, tape.param(*h_)), tape.param(*out_prelu_));
  return matmul(y, tape.param(*r_));
}

ForwardResult EntNet::forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) {
  if (per_story_) return forward_story(tape, batch, opts);
  const DType dtype = params_.dtype();
  const qa::MemoryBatch in = qa::read_memory_batch(batch, kName, sentence_len_, dtype);
  check_ids(in.story, vocab_, "story");
  check_ids(in.query, vocab_, "query");
  check_ids(in.answer, vocab_, "answer");
  const Var h = memory_pass(tape, in.story, in.memory_mask, opts, nullptr);
  const Var q = encode(tape.param(*embed_), tape.input(in.query), tape.param(*query_mask_));
  ForwardResult r;
  Var p;
  r.predictions = answer_scores(tape, h, q, p);
  if (opts.trace) opts.trace->record("attention", p.value());
  r.loss = cross_entropy(r.predictions, tape.input(in.answer));
  if (sum_loss_) r.loss = scale(r.loss, double(in.b));
  return r;
}

// Per story: one memory pass, every question reading the memories after the sentences before it
// (h^{question_at}), gathered from the pass's T + 1 states; padding questions are masked out of
// the loss (and their scores are never read).
ForwardResult EntNet::forward_story(Tape& tape, const Batch& batch, const ForwardOptions& opts) {
  const DType dtype = params_.dtype();
  MG_CHECK(batch.has("questions"), kName,
           ": per_story is true but the batch has no per-story fields (no 'questions'): the babi "
           "task gives them with --babi-view memory-story, which sets per_story itself");
  const qa::StoryMemoryBatch in = qa::read_story_memory_batch(batch, kName, sentence_len_, dtype);
  const int64_t b = in.b, q = in.q, n = in.b * in.q;
  check_ids(in.story, vocab_, "story");
  check_ids(in.questions, vocab_, "questions");
  for (int64_t i = 0; i < n; ++i)  // (answers on padding rows are not read)
    if (in.question_mask.at(i) != 0) {
      const double a = in.answers.at(i);
      MG_CHECK(a >= 0 && a < double(vocab_) && a == std::floor(a), kName,
               ": batch field 'answers' holds ", a, ", not a word id in [0, ", vocab_, ")");
    }
  // The states' list, per thread and reused: no allocation once the longest story has run.
  thread_local std::vector<Var> states;
  states.clear();
  memory_pass(tape, in.story, in.memory_mask, opts, &states);
  // All states [(T + 1) B, K, d], row t B + s = sample s after t sentences; question (s, k) reads
  // row question_at[s, k] B + s (padding: row s, h^0).
  const Var all = stack(std::span<const Var>(states), 0);
  const Var flat = reshape(all, Shape{int64_t(states.size()) * b, slots_, dim_});
  const Var rows = tape.constant(Shape{n}, dtype, 0.0);
  const Var answers = tape.constant(Shape{n}, dtype, 0.0);
  const Var live = tape.constant(Shape{n}, dtype, 0.0);
  int64_t questions = 0;
  {
    Tensor &tr = tape.value(rows.id), &ta = tape.value(answers.id), &tl = tape.value(live.id);
    for (int64_t i = 0; i < n; ++i) {
      const bool real = in.question_mask.at(i) != 0;
      tr.set(i, double((real ? int64_t(in.question_at.at(i)) : 0) * b + i / q));
      ta.set(i, real ? in.answers.at(i) : 0.0);
      tl.set(i, real ? 1.0 : 0.0);
      questions += real ? 1 : 0;
    }
  }
  const Var h = gather_rows(flat, rows);  // [B Q, K, d]
  const Var qv =
      reshape(encode(tape.param(*embed_), tape.input(in.questions), tape.param(*query_mask_)),
              Shape{n, dim_});
  Var p;
  const Var logits = answer_scores(tape, h, qv, p);
  if (opts.trace) opts.trace->record("attention", reshape(p, Shape{b, q, slots_}).value());
  ForwardResult r;
  r.predictions = reshape(logits, Shape{b, q, vocab_});
  r.loss = cross_entropy(logits, answers, live);  // the mean over the real questions
  if (sum_loss_) r.loss = scale(r.loss, double(questions));
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
  nlohmann::json two = check_config("two-prelus");  // a set of slopes each, as before 2026-11-28
  two["shared_prelu"] = false;
  // Per story: the memory-story view's fields of the same sentences (padded stories and
  // question lists, two questions at one position).
  nlohmann::json story = check_config("per-story");
  story["per_story"] = true;
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
       .check_configs = {check_config("official"), paper, mean, two, story},
       .check_batch = qa::make_babi_story_check_batch,
       .task_settings = kTaskSettings});
  return true;
}();

}  // namespace
}  // namespace memgrad
