// End-To-End Memory Network; see models/qa/memn2n.hpp and docs/babi.md.
#include "models/qa/memn2n.hpp"
#include "models/qa/memory_batch.hpp"

#include <cmath>

#include "engine/json_text.hpp"
#include "models/layers/config.hpp"
#include "models/qa/babi_check.hpp"
#include "models/qa/position_encoding.hpp"
#include "ops/ops.hpp"

namespace memgrad {
namespace {

const char* kName = "memn2n";

// Every hyper-parameter with the default of the official code for bAbI 1k single-task training.
// vocab_size, sentence_len and memory_size are the data's sizes: the task's model_dims() sets
// them (the values here are those of bAbI task 1, en).
const nlohmann::json kDefaults = {
    {"vocab_size", 20},           // words including nil (id 0), without time words
    {"sentence_len", 6},          // J: words per sentence (padded)
    {"memory_size", 10},          // memory slots = number of time words
    {"embedding_dim", 20},        // d: 20 for bAbI 1k; 50 for joint training and en-10k
    {"hops", 3},                  // K
    {"position_encoding", true},  // false: bag of words
    {"temporal_encoding", true},  // time words
    {"linear_start", true},       // start without the attention softmax
    {"ls_rule", "epochs"},        // "epochs": LS for ls_epochs (official); "validation": paper
    {"ls_epochs", 20},
    {"ls_lr_multiplier", 1.0},  // lr during LS = this x the trainer's lr (official: 0.005 both)
    // true (official train_linear_start.m): the lr halving restarts when LS ends and counts the
    // epochs of the second phase (halved at its epochs H, 2H, ... counted from 1, as train.m's
    // mod(ep, H) == 0); none during LS. false: the trainer's halving over the whole run.
    {"lr_decay_restart", true},
    // H: the trainer's key of the same name (one flag sets both). The model needs it only to
    // re-base the trainer's halving when lr_decay_restart is on; it must equal the trainer's.
    {"lr_halve_every_epochs", 25},
    // false (official): every sample has memory_size slots; empty ones hold nil words, score 0
    // and stay in the attention softmax (weight e^0 each). true: they get weight exactly 0.
    {"mask_empty_slots", false},
    {"init_std", 0.1},  // N(0, 0.1^2) weights
    {"loss", "sum"},    // "sum" over the batch (official) or "mean"
};

int64_t positive(const nlohmann::json& c, const char* key, int64_t min_value = 1) {
  const nlohmann::json& v = c.at(key);
  MG_CHECK(v.is_number_integer(), kName, ": config key '", key, "' must be a whole number, got ",
           dump_json(v));
  const auto x = v.get<int64_t>();
  MG_CHECK(x >= min_value, kName, ": config key '", key, "' must be at least ", min_value, ", got ",
           x);
  return x;
}

}  // namespace

MemN2N::MemN2N(const nlohmann::json& user, DType dtype, uint64_t seed)
    : Model(dtype), config_(layers::merge_config(kName, kDefaults, user)) {
  const nlohmann::json& c = config_;
  vocab_ = positive(c, "vocab_size", 2);
  sentence_len_ = positive(c, "sentence_len");
  memory_size_ = positive(c, "memory_size");
  dim_ = positive(c, "embedding_dim");
  hops_ = positive(c, "hops");
  pe_ = c.at("position_encoding").get<bool>();
  te_ = c.at("temporal_encoding").get<bool>();
  ls_rule_ = layers::config_choice(c, kName, "ls_rule", {"epochs", "validation"});
  ls_epochs_ = positive(c, "ls_epochs", 0);
  ls_lr_multiplier_ = c.at("ls_lr_multiplier").get<double>();
  MG_CHECK(ls_lr_multiplier_ > 0, kName, ": ls_lr_multiplier must be > 0");
  lr_decay_restart_ = c.at("lr_decay_restart").get<bool>();
  halve_every_ = positive(c, "lr_halve_every_epochs", 0);
  mask_empty_ = c.at("mask_empty_slots").get<bool>();
  const double init_std = c.at("init_std").get<double>();
  MG_CHECK(init_std > 0, kName, ": init_std must be > 0");
  sum_loss_ = layers::config_choice(c, kName, "loss", {"sum", "mean"}) == "sum";
  linear_start_ = c.at("linear_start").get<bool>();

  Rng rng(seed);
  const int64_t rows = table_rows();
  for (int64_t t = 0; t <= hops_; ++t) {
    std::string name;
    if (t == 0)
      name = "A1_B";
    else if (t == hops_)
      name = "C" + std::to_string(t) + "_W";
    else
      name = "C" + std::to_string(t) + "_A" + std::to_string(t + 1);
    Parameter& p = params_.add_normal(name, Shape{rows, dim_}, init_std, rng);
    for (int64_t k = 0; k < dim_; ++k) p.value.set(k, 0.0);  // the nil word
    tables_.push_back(&p);
  }
}

void MemN2N::build_bags(const Tensor& story, const Tensor& time, const Tensor& query) {
  const DType dtype = params_.dtype();
  const int64_t b = story.dim(0), m = story.dim(1), j = story.dim(2), rows = table_rows();
  const int64_t jp = te_ ? j + 1 : j;  // J': the time word is the last position
  // l[j, k] = 1 + alpha_k beta_j (qa/position_encoding.hpp); beta over J' positions.
  std::vector<double>& beta = beta_;
  beta.resize(size_t(jp));
  for (int64_t w = 0; w < jp; ++w) beta[size_t(w)] = qa::position_beta(w + 1, jp);
  if (!alpha_.defined() || alpha_.dtype() != dtype) {
    alpha_ = Tensor::empty(Shape{dim_}, dtype);
    for (int64_t k = 0; k < dim_; ++k) alpha_.set(k, qa::position_alpha(k + 1, dim_, jp));
  }
  for (Tensor* t : {&count_mem_, &pos_mem_}) {
    t->reshape_reuse(Shape{b, m, rows}, dtype);
    t->zero();
  }
  for (Tensor* t : {&count_query_, &pos_query_}) {
    t->reshape_reuse(Shape{b, rows}, dtype);
    t->zero();
  }
  MG_DISPATCH(dtype, T, {
    const T* ps = story.data<T>();
    const T* pt = time.data<T>();
    const T* pq = query.data<T>();
    T* nm = count_mem_.data<T>();
    T* pm = pos_mem_.data<T>();
    auto word = [&](T id, const char* field) {
      MG_CHECK(id >= 0 && id < T(vocab_) && id == std::floor(id), kName, ": batch field '", field,
               "' holds ", id, ", not a word id in [0, ", vocab_, ")");
      return int64_t(id);
    };
    for (int64_t r = 0; r < b * m; ++r) {
      for (int64_t w = 0; w < j; ++w) {
        const int64_t id = word(ps[r * j + w], "story");
        nm[r * rows + id] += T(1);
        pm[r * rows + id] += T(beta[size_t(w)]);
      }
      if (te_) {
        const T tau = pt[r];
        MG_CHECK(tau >= 0 && tau <= T(memory_size_) && tau == std::floor(tau), kName,
                 ": batch field 'time' holds ", tau, ", not a temporal index in [0, ", memory_size_,
                 "]");
        const int64_t id = tau > 0 ? vocab_ + int64_t(tau) - 1 : 0;  // 0: the nil word
        nm[r * rows + id] += T(1);
        pm[r * rows + id] += T(beta[size_t(j)]);
      }
    }
    T* nq = count_query_.data<T>();
    T* qq = pos_query_.data<T>();
    for (int64_t s = 0; s < b; ++s)
      for (int64_t w = 0; w < j; ++w) {
        const int64_t id = word(pq[s * j + w], "query");
        nq[s * rows + id] += T(1);
        qq[s * rows + id] += T(beta[size_t(w)]);
      }
  });
}

ForwardResult MemN2N::forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) {
  const DType dtype = params_.dtype();
  const qa::MemoryBatch in = qa::read_memory_batch(batch, kName, sentence_len_, dtype, true);
  const Tensor &story = in.story, &time = *in.time, &mask = in.memory_mask, &query = in.query,
               &answer = in.answer;
  const int64_t b = in.b, m = in.m;
  build_bags(story, time, query);

  // The tape's scratch keeps its capacity: no allocation in a steady-state step.
  static const char kTables = 0;
  std::vector<Var>& tables = tape.var_scratch(&kTables);
  tables.clear();
  for (Parameter* p : tables_) tables.push_back(tape.param(*p));
  const Var count_mem = tape.input(count_mem_), count_q = tape.input(count_query_);
  Var pos_mem, pos_q, alpha;
  if (pe_) {
    pos_mem = tape.input(pos_mem_);
    pos_q = tape.input(pos_query_);
    alpha = tape.input(alpha_);
  }
  const Var mk = tape.input(mask);
  Var neg, empty_score;
  if (!linear_start_) {
    if (!neg_.defined() || neg_.dtype() != dtype) neg_ = Tensor::full(Shape{1}, dtype, -1e30);
    neg = tape.input(neg_);
    if (!mask_empty_) {
      // The official memory has memory_size slots per sample; the e = memory_size - n empty ones
      // score 0, so together they add e * e^0 to the softmax's denominator: one more column of
      // score log(e) (-1e30 when e = 0). This does not depend on how far the batch is padded.
      empty_score_.reshape_reuse(Shape{b, 1}, dtype);
      for (int64_t s = 0; s < b; ++s) {
        double n = 0;
        for (int64_t i = 0; i < m; ++i) n += mask.at(s * m + i) != 0 ? 1 : 0;
        const double e = double(memory_size_) - n;
        empty_score_.set(s, e >= 1 ? std::log(e) : -1e30);
      }
      empty_score = tape.input(empty_score_);
    }
  }
  // sum_j l_j * T[x_j] = count T + alpha * (pos T): two GEMMs over the whole batch.
  auto embed = [&](Var table, Var count, Var pos) {
    const Var bow = matmul(count, table);
    return pe_ ? add(bow, mul(matmul(pos, table), alpha)) : bow;
  };

  Var u = embed(tables[0], count_q, pos_q);        // [B, d]
  Var mem = embed(tables[0], count_mem, pos_mem);  // A^1 memories [B, M, d]
  for (int64_t k = 0; k < hops_; ++k) {
    const Var c = embed(tables[size_t(k + 1)], count_mem, pos_mem);  // C^k, also A^{k+1}
    const Var scores = reshape(bmm(mem, reshape(u, Shape{b, dim_, 1})), Shape{b, m});
    // Empty slots get weight exactly 0 on the batch's padding (masked out of the softmax and
    // multiplied by the mask); without mask_empty_slots the softmax also has the empty slots'
    // column (see above), which is then dropped.
    Var p;
    if (linear_start_)
      p = mul(scores, mk);
    else if (mask_empty_)
      p = mul(softmax(where(mk, scores, neg)), mk);
    else
      p = mul(slice(softmax(concat({where(mk, scores, neg), empty_score}, 1)), 1, 0, m), mk);
    if (opts.trace) opts.trace->record("hop" + std::to_string(k + 1) + "/attention", p.value());
    const Var o = reshape(bmm(reshape(p, Shape{b, 1, m}), c), Shape{b, dim_});
    u = add(u, o);
    mem = c;
  }
  ForwardResult r;
  r.predictions = matmul(u, transpose(tables.back()));  // W^T = C^K: [B, rows]
  if (opts.trace) opts.trace->record("answer_logits", r.predictions.value());
  r.loss = cross_entropy(r.predictions, tape.input(answer));
  if (sum_loss_) r.loss = scale(r.loss, double(b));
  return r;
}

std::string MemN2N::on_epoch_end(int64_t epoch, double validation_loss) {
  epochs_done_ = epoch;
  if (!linear_start_) return {};
  bool end = false;
  std::string why;
  if (ls_rule_ == "validation" && std::isfinite(validation_loss)) {
    end = have_validation_loss_ && validation_loss >= last_validation_loss_;
    if (end) why = "validation loss stopped decreasing";
    last_validation_loss_ = validation_loss;
    have_validation_loss_ = true;
  } else {
    end = epoch >= ls_epochs_;
    why = std::to_string(ls_epochs_) + " linear-start epochs done";
  }
  if (!end) return {};
  linear_start_ = false;
  ls_end_epoch_ = epoch;
  return "linear start ended after epoch " + std::to_string(epoch) + " (" + why +
         "): attention softmax re-inserted" +
         (lr_decay_restart_ && halve_every_ > 0 ? "; the lr halving restarts" : "");
}

void MemN2N::after_update() {
  for (Parameter* p : tables_)
    MG_DISPATCH(p->value.dtype(), T, {
      T* v = p->value.data<T>();
      std::fill(v, v + dim_, T(0));  // row 0: the nil word
    });
}

double MemN2N::lr_multiplier() const {
  const double phase = linear_start_ ? ls_lr_multiplier_ : 1.0;
  if (!lr_decay_restart_ || halve_every_ <= 0) return phase;
  // The trainer has applied 0.5^floor(e / H) for the run's epoch e (counted from 0); undo it and
  // apply the official per-phase halving instead: none during LS, then 0.5^floor((q + 1) / H) in
  // the q-th epoch (from 0) after LS ended.
  const int64_t e = epochs_done_, h = halve_every_;
  const int64_t halvings = linear_start_ ? 0 : (e - ls_end_epoch_ + 1) / h;
  return phase * std::pow(2.0, double(e / h - halvings));
}

nlohmann::json MemN2N::training_state() const {
  nlohmann::json s = {{"linear_start", linear_start_},
                      {"epochs_done", epochs_done_},
                      {"ls_end_epoch", ls_end_epoch_}};
  s["last_validation_loss"] =
      have_validation_loss_ ? nlohmann::json(last_validation_loss_) : nlohmann::json(nullptr);
  return s;
}

void MemN2N::set_training_state(const nlohmann::json& s) {
  if (s.contains("linear_start")) linear_start_ = s.at("linear_start").get<bool>();
  if (s.contains("epochs_done")) epochs_done_ = s.at("epochs_done").get<int64_t>();
  if (s.contains("ls_end_epoch")) ls_end_epoch_ = s.at("ls_end_epoch").get<int64_t>();
  if (s.contains("last_validation_loss")) {
    const nlohmann::json& v = s.at("last_validation_loss");
    have_validation_loss_ = v.is_number();
    last_validation_loss_ = have_validation_loss_ ? v.get<double>() : 0.0;
  }
}

namespace {

// The bAbI check batch's sizes (qa/babi_check.hpp) with tiny model dimensions.
nlohmann::json check_config(const char* variant, bool linear_start) {
  nlohmann::json c = qa::babi_check_dims();
  c.update({{"variant", variant},
            {"embedding_dim", 4},
            {"hops", 3},
            {"linear_start", linear_start},
            {"init_std", 0.3}});
  return c;
}

const bool kRegistered = [] {
  nlohmann::json bow = check_config("bow-no-time-mean-loss", false);
  bow["position_encoding"] = false;
  bow["temporal_encoding"] = false;
  bow["hops"] = 2;
  bow["loss"] = "mean";
  nlohmann::json masked = check_config("softmax-masked-empty-slots", false);
  masked["mask_empty_slots"] = true;
  register_model(
      {.name = kName,
       .summary = "End-To-End Memory Network (Sukhbaatar et al. 2015): 3 hops, position and "
                  "temporal encoding, adjacent tying, linear start; bAbI QA",
       .create = [](const nlohmann::json& config, DType dtype, uint64_t seed)
           -> std::unique_ptr<Model> { return std::make_unique<MemN2N>(config, dtype, seed); },
       .default_config = kDefaults,
       .train_defaults = {{"optimizer", "sgd"},
                          {"lr", 0.005},  // official with LS: 0.005 in both phases
                          {"momentum", 0.0},
                          {"batch", 32},
                          {"epochs", 120},  // official: 20 LS epochs + 100
                          {"clip_norm_per_param", 40.0},
                          {"lr_halve_every_epochs", 25}},
       .check_configs = {check_config("softmax", false), check_config("linear-start", true), masked,
                         bow},
       .check_batch = qa::make_babi_check_batch});
  return true;
}();

}  // namespace
}  // namespace memgrad
