// Adaptive Memory Network: config, parameters, the sentence loop and registration; see
// models/qa/amn.hpp (the equations and gaps) and docs/amn.md.
#include "models/qa/amn.hpp"

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "models/layers/config.hpp"
#include "models/qa/babi_check.hpp"
#include "models/qa/memory_batch.hpp"
#include "ops/ops.hpp"

namespace memgrad {
namespace {

const char* kName = "amn";

const nlohmann::json kDefaults = {
    {"vocab_size", 20},                // words including nil (id 0): the task sets it
    {"sentence_len", 6},               // J: the task sets it
    {"memory_size", 50},               // the story window (the task's setting)
    {"embedding_dim", 50},             // d (gap 9)
    {"max_banks", 5},                  // L: m_0 .. m_{L-1} (the paper creates 1-6)
    {"propagation", true},             // Pi_prop (Eqs. 14-15); false: the ablation
    {"prop_hops", 2},                  // r of Eq. 14 (gap 6)
    {"recency", 1.0},                  // extra weight of the current sentence's edges (gap 5)
    {"relevance_decay", 1.0},          // E[s] of a node k edges from the answer: x decay^k (gap 7)
    {"relevance_graph", "component"},  // E[s]'s relevant nodes (gap 7): "component", "ancestors"
    {"relevance_gate", "similarity"},  // Eq. 6 (gap 1): "similarity" or "literal"
    {"move_prob", "linear"},           // Eq. 12 (gap 2): "linear" or "strength"
    {"bank_moves", "copy"},            // Eq. 12 (gap 15): "copy", "migrate" or "filter"
    {"encoder_state", "sentence"},     // gap 14: "sentence" (reset each sentence) or "story"
    {"dropout", 0.0},  // on the embedded words u (story and question), in training; the paper
                       // names no regularisation
    {"bank_weighting", "learned"},  // Eq. 18 (gap 4): "learned", "learned-positive", "exp"
    {"bank_temp_init", 1.0},  // tau at the start (learned weightings; > 0 for learned-positive)
    {"ctrl_grad", "straight_through"},  // "straight_through" or "loss_only" (H detached)
    {"decisions", "sample"},            // "sample", or "surrogate" (gradient checks: H = p)
    {"inference_decisions", "sample"},  // at inference: "sample" (as in training) or
                                        // "most_likely" (H = [p > 0.5], deterministic; ours)
    {"p_hat", 0.8},                     // L_b (gap 8)
    {"beta", 0.25},
    {"strength_loss", 1.0},  // weights of L_s, L_b, L_move in the total loss
    {"bank_loss", 1.0},
    {"move_loss", 1.0},
    {"decode_banks", 0},  // inference reads the last k existing banks; 0 = all (gap 10)
};

// "t<step>/<what>", a trace name.
std::string step_name(int64_t step, const char* what) {
  std::string name = "t";
  name += std::to_string(step);
  name += "/";
  name += what;
  return name;
}

void accumulate(Var& total, Var term) { total = total.defined() ? add(total, term) : term; }

// For the trace: sentence t's word ids [B, J] (`edges` false), or the path it adds to the word
// graph A as (from, to) pairs [B, J, 2], zero after the last edge (qa::sentence_path), from the
// batch's ids [B, T, J].
Tensor sentence_record(const std::vector<int32_t>& ids, int64_t b, int64_t t_count, int64_t j,
                       int64_t t, DType dtype, bool edges) {
  Tensor out = Tensor::zeros(edges ? Shape{b, j, 2} : Shape{b, j}, dtype);
  std::vector<int32_t> path(size_t(2 * j), 0);
  for (int64_t s = 0; s < b; ++s) {
    const std::span<const int32_t> words(ids.data() + (s * t_count + t) * j, size_t(j));
    if (!edges) {
      for (int64_t w = 0; w < j; ++w) out.set(s * j + w, double(words[size_t(w)]));
      continue;
    }
    const int64_t n = qa::sentence_path(words, path);
    for (int64_t e = 0; e < 2 * n; ++e) out.set(s * j * 2 + e, double(path[size_t(e)]));
  }
  return out;
}

}  // namespace

Amn::Amn(const nlohmann::json& user, DType dtype, uint64_t seed)
    : Model(dtype), config_(layers::merge_config(kName, kDefaults, user)) {
  const nlohmann::json& c = config_;
  vocab_ = layers::config_int(c, kName, "vocab_size", 2);
  sentence_len_ = layers::config_int(c, kName, "sentence_len");
  layers::config_int(c, kName, "memory_size");
  dim_ = layers::config_int(c, kName, "embedding_dim");
  banks_ = layers::config_int(c, kName, "max_banks", 2);
  graph_.hops = layers::config_int(c, kName, "prop_hops");
  propagation_ = c.at("propagation").get<bool>();
  carry_encoder_ =
      layers::config_choice(c, kName, "encoder_state", {"sentence", "story"}) == "story";
  dropout_ = layers::config_dropout(c, kName);
  graph_.recency = c.at("recency").get<double>();
  MG_CHECK(graph_.recency >= 0, kName, ": recency must be >= 0, got ", graph_.recency);
  graph_.relevance =
      layers::config_choice(c, kName, "relevance_graph", {"component", "ancestors"}) == "ancestors"
          ? qa::RelevanceGraph::ancestors
          : qa::RelevanceGraph::component;
  relevance_decay_ = c.at("relevance_decay").get<double>();
  MG_CHECK(relevance_decay_ > 0 && relevance_decay_ <= 1, kName,
           ": relevance_decay must be in (0, 1], got ", relevance_decay_);
  decode_banks_ = c.at("decode_banks").get<int64_t>();
  MG_CHECK(decode_banks_ >= 0 && decode_banks_ <= banks_, kName, ": decode_banks must be in [0, ",
           banks_, "] (0 = all banks), got ", decode_banks_);
  settings_.literal_gate =
      layers::config_choice(c, kName, "relevance_gate", {"similarity", "literal"}) == "literal";
  settings_.move_by_strength =
      layers::config_choice(c, kName, "move_prob", {"linear", "strength"}) == "strength";
  const std::string moves =
      layers::config_choice(c, kName, "bank_moves", {"copy", "migrate", "filter"});
  settings_.moves = moves == "migrate"  ? qa::amn::BankMoves::migrate
                    : moves == "filter" ? qa::amn::BankMoves::filter
                                        : qa::amn::BankMoves::copy;
  const std::string weighting =
      layers::config_choice(c, kName, "bank_weighting", {"learned", "learned-positive", "exp"});
  settings_.learned_weighting = weighting != "exp";
  settings_.positive_temperature = weighting == "learned-positive";
  const double temp_init = c.at("bank_temp_init").get<double>();
  MG_CHECK(
      !settings_.positive_temperature || temp_init > 0, kName,
      ": bank_temp_init must be > 0 with bank_weighting learned-positive (tau = e^theta), got ",
      temp_init);
  settings_.straight_through =
      layers::config_choice(c, kName, "ctrl_grad", {"straight_through", "loss_only"}) ==
      "straight_through";
  settings_.mode =
      layers::config_choice(c, kName, "decisions", {"sample", "surrogate"}) == "surrogate"
          ? StraightThrough::surrogate
          : StraightThrough::sample;
  most_likely_inference_ = layers::config_choice(c, kName, "inference_decisions",
                                                 {"sample", "most_likely"}) == "most_likely";
  settings_.p_hat = c.at("p_hat").get<double>();
  settings_.beta = c.at("beta").get<double>();
  MG_CHECK(settings_.p_hat > 0 && settings_.p_hat < 1, kName, ": p_hat must be in (0, 1), got ",
           settings_.p_hat);
  MG_CHECK(settings_.beta > 0, kName, ": beta must be > 0, got ", settings_.beta);
  settings_.strength_loss = c.at("strength_loss").get<double>();
  settings_.bank_loss = c.at("bank_loss").get<double>();
  settings_.move_loss = c.at("move_loss").get<double>();
  for (double wgt : {settings_.strength_loss, settings_.bank_loss, settings_.move_loss})
    MG_CHECK(wgt >= 0, kName, ": the loss weights must be >= 0, got ", wgt);

  Rng rng(seed);
  const int64_t d = dim_, v = vocab_;
  // Embeddings U(-sqrt 3, sqrt 3), everything else Xavier (§5.1).
  p_.embed = &params_.add_uniform("E", Shape{v, d}, -std::sqrt(3.0), std::sqrt(3.0), rng);
  enc_.emplace(params_, "enc", d, d, rng);
  au_.emplace(params_, "au", d, d, rng);
  prop_.emplace(params_, "prop", d, d, rng);
  const double vec_std = std::sqrt(2.0 / double(d + 1)), scalar_std = 1.0;
  p_.s0 = &params_.add_normal("s0", Shape{v}, std::sqrt(2.0 / double(v + 1)), rng);
  p_.u_z = &params_.add_normal("sgru.U_z", Shape{d, 1}, vec_std, rng);
  p_.w_z = &params_.add_normal("sgru.W_z", Shape{d, 1}, vec_std, rng);
  p_.x_z = &params_.add_normal("sgru.X_z", Shape{1}, scalar_std, rng);
  p_.u_r = settings_.literal_gate ? &params_.add_normal("sgru.U_r", Shape{d, 1}, vec_std, rng)
                                  : &params_.add_normal("sgru.U_r", Shape{1}, scalar_std, rng);
  p_.w_h = &params_.add_normal("sgru.W_h", Shape{d, 1}, vec_std, rng);
  p_.u_h = &params_.add_normal("sgru.U_h", Shape{1}, scalar_std, rng);
  p_.new_w = &params_.add_glorot("new.w", Shape{v * d, 1}, rng);
  p_.new_b = &params_.add("new.b", Shape{1});
  if (!settings_.move_by_strength) {
    p_.move_v = &params_.add_glorot("move.v", Shape{d, 1}, rng);
    p_.move_b = &params_.add("move.b", Shape{1});
  }
  if (settings_.positive_temperature) {
    p_.temp = &params_.add("bank_log_temp", Shape{1});  // theta, tau = e^theta
    p_.temp->value.fill(std::log(temp_init));
  } else if (settings_.learned_weighting) {
    p_.temp = &params_.add("bank_temp", Shape{1});
    p_.temp->value.fill(temp_init);
  }
  p_.h = &params_.add_glorot("H", Shape{d, d}, rng);
  p_.out_prelu = &params_.add("out_prelu", Shape{d});
  p_.out_prelu->value.fill(0.25);
  p_.r = &params_.add_glorot("R", Shape{d, v}, rng);
  stats_.reset(banks_);
  after_update();
}

void Amn::after_update() {
  MG_DISPATCH(p_.embed->value.dtype(), T, {
    T* e = p_.embed->value.data<T>();
    std::fill(e, e + dim_, T(0));  // E[0]: the nil word
  });
}

ForwardResult Amn::forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) {
  using namespace qa::amn;
  const DType dtype = params_.dtype();
  const qa::MemoryBatch in = qa::read_memory_batch(batch, kName, sentence_len_, dtype);
  const int64_t b = in.b, t_count = in.m, j = in.j, v = vocab_, d = dim_, l = banks_;
  const bool aux = opts.training;
  const bool migrate = settings_.moves == BankMoves::migrate;
  // The decisions' mode: sampled in training; at inference sampled or the most likely value.
  Settings decisions = settings_;
  if (!opts.training && most_likely_inference_ && decisions.mode == StraightThrough::sample)
    decisions.mode = StraightThrough::most_likely;
  const Structures st =
      build_structures(tape, in.story, in.memory_mask, in.query, &in.answer, v, graph_, scratch_);
  const Encoded enc =
      encode(tape, *enc_, tape.param(*p_.embed), tape.input(in.story), tape.input(in.query), st,
             {.carry_state = carry_encoder_, .dropout = dropout_, .training = opts.training});
  const Var au_input = au_->project_inputs(enc.last);  // [B, T, 3d]
  const Var q = enc.question;

  // E[s] targets (gap 7), one draw per entity from the step's replayable noise.
  Var targets;
  if (aux) {
    targets = tape.constant(Shape{b, v}, dtype, 0.0);
    Rng rng = tape.noise_stream();
    fill_relevance_targets(st, rng, tape.value(targets.id), relevance_decay_);
  }
  Var strength_term, bank_term, move_term;

  Var w = tape.constant(Shape{b, v, d}, dtype, 0.0);
  Var dict = tape.constant(Shape{b, v, d}, dtype, 0.0);
  Var s = add(tape.constant(Shape{b, v}, dtype, 0.0), sigmoid(tape.param(*p_.s0)));  // s^0
  Banks banks{tape.constant(Shape{b, l - 1, v}, dtype, 0.0),
              tape.constant(Shape{b, l - 1}, dtype, 0.0)};
  const auto at = [&](Var x, int64_t t, Shape shape) { return reshape(slice(x, 0, t, 1), shape); };
  for (int64_t t = 0; t < t_count; ++t) {
    // The sentence's intermediate values die with it; what the next sentence reads is kept.
    Temporaries temps(tape);
    const Var live_t = at(st.live, t, Shape{b, 1});
    const Var seen_t = at(st.seen, t, Shape{b, v, 1});
    // (3) D[id] += w_i over sentence t's words.
    const Var words_t = reshape(slice(enc.words, 1, t, 1), Shape{b, j, d});
    dict = add(dict, bmm(at(st.onehot, t, Shape{b, v, j}), words_t));
    w = add_update(tape, *au_, w, dict, slice(au_input, 1, t, 1), at(st.fresh, t, Shape{b, v, 1}),
                   at(st.again, t, Shape{b, v, 1}), at(st.pick, t, Shape{b, v, j}));
    if (propagation_)
      w = propagate(tape, *prop_, w, at(st.prop, t, Shape{b, v, v}),
                    at(st.heard, t, Shape{b, v, 1}));
    const Var active = mul(reshape(seen_t, Shape{b, v}), live_t);  // entities in memory
    s = where(active, strength_step(tape, p_, settings_, w, q, s), s);
    if (aux) accumulate(strength_term, bernoulli_kl(s, targets, active, st.seen_count));

    const Var banks_all = all_banks(seen_t, banks.upper, migrate);
    const Creation cr = creation_prob(tape, p_, banks_all, banks.exists, w);
    banks = create_bank(banks, cr.last, decide(cr.p, decisions), live_t);
    if (aux) {
      // L_b's target p_hat^(1 / (beta |l_i|)), |l_i| = t + 1 (gap 8).
      const double target =
          std::clamp(std::pow(settings_.p_hat, 1.0 / (settings_.beta * double(t + 1))), 0.01, 0.99);
      accumulate(bank_term, bernoulli_kl(cr.p, tape.constant(Shape{b, 1}, dtype, target), live_t,
                                         st.live_count));
    }
    const Var pm = move_prob(tape, p_, settings_, w, s);
    if (settings_.moves == BankMoves::filter) {  // a draw per upper bank and entity
      const Var per_bank =
          add(tape.constant(Shape{b, l - 1, v}, dtype, 0.0), reshape(pm, Shape{b, 1, v}));
      banks = filter_banks(banks, seen_t, decide(per_bank, decisions), live_t, scratch_.bank_rows);
    } else {
      banks = move_entities(tape, banks, banks_all, decide(pm, decisions), live_t, migrate);
    }
    if (aux) accumulate(move_term, bernoulli_kl(pm, targets, active, st.seen_count));
    if (opts.trace) {
      opts.trace->record(step_name(t, "banks"), all_banks(seen_t, banks.upper, migrate).value());
      opts.trace->record(step_name(t, "exists"), banks.exists.value());
      opts.trace->record(step_name(t, "strength"), s.value());
      opts.trace->record(step_name(t, "p_new"), reshape(cr.p, Shape{b}).value());
      opts.trace->record(step_name(t, "p_move"), pm.value());
      opts.trace->record(step_name(t, "words"),
                         sentence_record(scratch_.ids, b, t_count, j, t, dtype, false));
      opts.trace->record(step_name(t, "edges"),
                         sentence_record(scratch_.ids, b, t_count, j, t, dtype, true));
    }
    for (const Var& kept : {dict, w, s, banks.upper, banks.exists}) temps.keep(kept);
    for (const Var& term : {strength_term, bank_term, move_term})
      if (term.defined()) temps.keep(term);
  }

  const Var banks_all = all_banks(at(st.seen, t_count - 1, Shape{b, v, 1}), banks.upper, migrate);
  const Var exists_all = concat({tape.constant(Shape{b, 1}, dtype, 1.0), banks.exists}, 1);
  // The banks decoded: all, or at inference the last decode_banks existing ones (gap 10).
  const Var read = tape.constant(Shape{b, l}, dtype, 1.0);
  if (!opts.training && decode_banks_ > 0) {
    Tensor& r = tape.value(read.id);
    for (int64_t s_i = 0; s_i < b; ++s_i) {
      int64_t last = 0;
      for (int64_t m = 0; m < l; ++m)
        if (exists_all.value().at(s_i * l + m) >= 0.5) last = m;
      for (int64_t m = 0; m < l; ++m) r.set(s_i * l + m, m > last - decode_banks_ ? 1.0 : 0.0);
    }
  }
  const Decoded dec = decode(tape, p_, settings_, w, s, q, banks_all, exists_all, read);
  if (opts.trace) {
    opts.trace->record("end/banks", banks_all.value());
    opts.trace->record("end/exists", exists_all.value());
    opts.trace->record("bank_weights", dec.bank_weights.value());
    opts.trace->record("attention", dec.attention.value());
    opts.trace->record("end/strength", s.value());
  }
  if (!opts.training) {
    stats_.add({w.value(), s.value(), q.value(), banks_all.value(), exists_all.value(), in.answer,
                p_.h->value, p_.out_prelu->value, p_.r->value, dec.temperature});
  }
  ForwardResult r;
  r.predictions = dec.logits;
  r.loss = cross_entropy(dec.logits, tape.input(in.answer));
  if (aux) {
    if (settings_.strength_loss > 0)
      r.loss = add(r.loss, scale(strength_term, settings_.strength_loss));
    if (settings_.bank_loss > 0) r.loss = add(r.loss, scale(bank_term, settings_.bank_loss));
    if (settings_.move_loss > 0) r.loss = add(r.loss, scale(move_term, settings_.move_loss));
  }
  return r;
}

namespace {

// The bAbI check batch's sizes (qa/babi_check.hpp) with a tiny model; decisions in surrogate mode
// (forward = p, the straight-through backward unchanged) unless the variant says otherwise.
nlohmann::json check_config(const char* variant) {
  nlohmann::json c = qa::babi_check_dims();
  c["variant"] = variant;
  c["embedding_dim"] = 3;
  c["max_banks"] = 3;
  c["decisions"] = "surrogate";
  return c;
}

const bool kRegistered = [] {
  nlohmann::json alt = check_config("surrogate-literal-gate-strength-moves-exp-weights");
  alt["relevance_gate"] = "literal";
  alt["move_prob"] = "strength";
  alt["bank_weighting"] = "exp";
  alt["prop_hops"] = 1;
  nlohmann::json positive = check_config("surrogate-positive-temperature");
  positive["bank_weighting"] = "learned-positive";
  positive["bank_temp_init"] = 0.6;  // theta = log 0.6: d tau / d theta = 0.6, not 1
  nlohmann::json migrate = check_config("surrogate-migrate");
  migrate["bank_moves"] = "migrate";
  nlohmann::json filter = check_config("surrogate-filter");
  filter["bank_moves"] = "filter";
  nlohmann::json story_encoder = check_config("surrogate-story-encoder");
  story_encoder["encoder_state"] = "story";
  nlohmann::json dropped = check_config("surrogate-dropout");
  dropped["dropout"] = 0.5;
  nlohmann::json sampled = check_config("sampled-decisions-loss-only");
  sampled["decisions"] = "sample";
  sampled["ctrl_grad"] = "loss_only";
  sampled["bank_weighting"] = "exp";
  register_model(
      {.name = kName,
       .summary = "Adaptive Memory Network (AMN, ICLR 2018 submission): entity banks created and "
                  "filled by Bernoulli straight-through decisions, SGRU relevance strengths, "
                  "propagation over the word graph, decode from the most relevant banks; bAbI QA",
       .create = [](const nlohmann::json& config, DType dtype, uint64_t seed)
           -> std::unique_ptr<Model> { return std::make_unique<Amn>(config, dtype, seed); },
       .default_config = kDefaults,
       .train_defaults = {{"optimizer", "adam"},
                          {"lr", 1e-3},
                          {"batch", 32},
                          {"epochs", 100},
                          {"clip_norm", 40.0}},
       .check_configs = {check_config("surrogate"), alt, positive, migrate, filter, story_encoder,
                         dropped, sampled},
       .check_batch = qa::make_babi_check_batch});
  return true;
}();

}  // namespace
}  // namespace memgrad
