// Dynamic Memory Network+; see models/qa/dmn_plus.hpp and docs/dmn-plus.md.
#include "models/qa/dmn_plus.hpp"
#include "models/qa/memory_batch.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "models/layers/config.hpp"
#include "models/layers/row_packing.hpp"
#include "models/qa/babi_check.hpp"
#include "models/qa/position_encoding.hpp"
#include "ops/ops.hpp"

namespace memgrad {
namespace {

const char* kName = "dmn-plus";

// Every hyper-parameter with the DMN+ paper's bAbI-10k default (section 5.1; docs/dmn-plus.md).
// vocab_size, sentence_len and memory_size are the data's sizes: the task's model_dims() sets them
// (memory_size, the number of facts a question sees, is the babi task's setting; the model only
// accepts it).
const nlohmann::json kDefaults = {
    {"vocab_size", 20},     // words including nil (id 0)
    {"sentence_len", 6},    // J: words per sentence (padded)
    {"memory_size", 10},    // facts per question (the task's setting)
    {"embedding_dim", 80},  // d: the paper's 80
    {"hidden", 80},         // H: the paper's 80
    {"passes", 3},          // T: episodic memory passes
    {"dropout", 0.1},       // drop probability on f_i and on the answer module's m^T (keep 0.9)
    {"l2", 0.001},          // (l2 / 2) |W|^2 for every weight but biases (public implementation)
    {"loss", "sum"},        // cross-entropy "sum" over the batch or "mean"
    {"answer", "gru"},      // "gru" (DMN's answer GRU, one step) or "linear" (W [m^T; q])
    {"tied_memory_update", false},   // true: one W for every pass (the paper unties them)
    {"position_encoding", "paper"},  // "paper" (DMN+/MemN2N paper) or "memn2n" (official code)
    {"embedding_init", 1.7320508075688772},  // E ~ uniform(-a, a), the paper's sqrt(3)
};

// The position encoding l_jd = a_j + b_d c_j (j = 1..J, d = 1..D), as its three vectors.
void position_factors(const std::string& kind, int64_t J, int64_t D, std::vector<double>& a,
                      std::vector<double>& c, Tensor& b, DType dtype) {
  a.resize(size_t(J));
  c.resize(size_t(J));
  b.reshape_reuse(Shape{D}, dtype);
  for (int64_t j = 1; j <= J; ++j) {
    const double x = double(j) / double(J);
    // paper: (1 - j/J) - (d/D)(1 - 2j/J) = (1 - j/J) + (d/D)(2j/J - 1)
    // memn2n: 1 + alpha_d beta_j (models/qa/position_encoding.hpp)
    a[size_t(j - 1)] = kind == "paper" ? 1.0 - x : 1.0;
    c[size_t(j - 1)] = kind == "paper" ? 2.0 * x - 1.0 : qa::position_beta(j, J);
  }
  for (int64_t d = 1; d <= D; ++d)
    b.set(d - 1, kind == "paper" ? double(d) / double(D) : qa::position_alpha(d, D, J));
}

// |x| = x o sign(x), with sign(x) read from the values as data (no gradient of its own): one
// product whose derivative is sign(x), exact away from 0. `sign` is the model's buffer for it,
// reused every step.
Var absolute(Tape& tape, Var x, Tensor& sign) {
  sign.reshape_reuse(x.shape(), x.dtype());
  MG_DISPATCH(x.dtype(), T, {
    const T* px = x.value().data<T>();
    T* ps = sign.data<T>();
    for (int64_t i = 0, n = x.value().numel(); i < n; ++i)
      ps[i] = px[i] > T(0) ? T(1) : (px[i] < T(0) ? T(-1) : T(0));
  });
  return mul(x, tape.input(sign));
}

}  // namespace

DmnPlus::DmnPlus(const nlohmann::json& user, DType dtype, uint64_t seed)
    : Model(dtype), config_(layers::merge_config(kName, kDefaults, user)) {
  const nlohmann::json& c = config_;
  vocab_ = layers::config_int(c, kName, "vocab_size", 2);
  sentence_len_ = layers::config_int(c, kName, "sentence_len");
  layers::config_int(c, kName, "memory_size");
  dim_ = layers::config_int(c, kName, "embedding_dim");
  hidden_ = layers::config_int(c, kName, "hidden");
  passes_ = layers::config_int(c, kName, "passes");
  dropout_ = layers::config_dropout(c, kName);
  l2_ = c.at("l2").get<double>();
  MG_CHECK(l2_ >= 0, kName, ": l2 must be >= 0, got ", l2_);
  sum_loss_ = layers::config_choice(c, kName, "loss", {"sum", "mean"}) == "sum";
  gru_answer_ = layers::config_choice(c, kName, "answer", {"gru", "linear"}) == "gru";
  tied_update_ = c.at("tied_memory_update").get<bool>();
  position_encoding_ = layers::config_choice(c, kName, "position_encoding", {"paper", "memn2n"});
  const double init = c.at("embedding_init").get<double>();
  MG_CHECK(init > 0, kName, ": embedding_init must be > 0, got ", init);

  const int64_t H = hidden_;
  Rng rng(seed);
  embedding_ = &params_.add_uniform("embedding", Shape{vocab_, dim_}, -init, init, rng);
  for (int64_t k = 0; k < dim_; ++k) embedding_->value.set(k, 0.0);  // nil: never read
  fusion_fwd_ = DmnGru(params_, "fusion.fwd", dim_, H, false, rng);
  fusion_bwd_ = DmnGru(params_, "fusion.bwd", dim_, H, false, rng);
  question_ = DmnGru(params_, "question", dim_, H, false, rng);
  // W^(1) [4H, H] as two halves (see the header), Xavier for the whole [4H, H].
  const double l1 = std::sqrt(6.0 / double(5 * H));
  att_w1_q_ = &params_.add_uniform("attention.W1_q", Shape{2 * H, H}, -l1, l1, rng);
  att_w1_m_ = &params_.add_uniform("attention.W1_m", Shape{2 * H, H}, -l1, l1, rng);
  att_b1_ = &params_.add("attention.b1", Shape{H});
  // W^(2) without b^(2): a constant added to every fact's score cancels in the softmax over the
  // facts (its gradient is exactly 0).
  att_score_ = layers::Linear(params_, "attention.score", H, 1, rng, false);
  episode_ = DmnGru(params_, "episode", H, H, true, rng);
  for (int64_t t = 0; t < (tied_update_ ? 1 : passes_); ++t)
    memory_update_.emplace_back(params_, tied_update_ ? "memory" : "memory" + std::to_string(t + 1),
                                3 * H, H, rng);
  if (gru_answer_) answer_gru_ = DmnGru(params_, "answer.gru", H, H, false, rng);
  answer_out_ = layers::Linear(params_, "answer.out", gru_answer_ ? H : 2 * H, vocab_, rng);
  // Weights are the rank-2 parameters; biases (rank 1) are not penalised.
  for (size_t i = 0; i < params_.size(); ++i)
    if (params_[i].value.rank() == 2) weights_.push_back(&params_[i]);
  abs_sign_.resize(size_t(passes_ + 1));  // |f - q| and |f - m^{t-1}| of every pass
}

void DmnPlus::build_inputs(const Tensor& story, const Tensor& mask, const Tensor& query,
                           const Tensor& answer) {
  const DType dtype = params_.dtype();
  const int64_t b = story.dim(0), m = story.dim(1), j = story.dim(2);
  position_factors(position_encoding_, j, dim_, pe_a_, pe_c_, pe_b_, dtype);
  mask_.reshape_reuse(Shape{b, m}, dtype);
  query_.reshape_reuse(Shape{b, j}, dtype);
  query_mask_.reshape_reuse(Shape{b, j}, dtype);
  answer_.reshape_reuse(Shape{b}, dtype);
  counts_.assign(size_t(b), 0);
  active_.assign(size_t(m), 0);
  word_all_.assign(size_t(j), 1);
  question_steps_ = 0;
  MG_DISPATCH(dtype, T, {
    // Each sample's facts: a prefix of its slots (the babi task's layout), counted.
    const T* pm = mask.data<T>();
    for (int64_t s = 0; s < b; ++s)
      for (int64_t k = 0; k < m; ++k) {
        const T v = pm[s * m + k];
        MG_CHECK(v == T(0) || v == T(1), kName, ": batch field 'memory_mask' holds ", v,
                 ", not 0 or 1");
        MG_CHECK(v == T(0) || k == counts_[size_t(s)], kName,
                 ": batch field 'memory_mask' must hold each sample's facts first (1s, then 0s); "
                 "sample ",
                 s, " has a fact at slot ", k, " after an empty slot");
        if (v != T(0)) ++counts_[size_t(s)];
      }
  });
  // Rows in order of fact count, most first: at fact i the rows that have one are the leading
  // active_[i] rows (see forward()).
  sorted_ = layers::longest_first(counts_, order_);
  unsort_.resize(size_t(b));
  real_.clear();
  real_sample_.clear();
  for (int64_t p = 0; p < b; ++p) {
    unsort_[size_t(order_[size_t(p)])] = p;
    for (int64_t i = 0; i < counts_[size_t(order_[size_t(p)])]; ++i) {
      ++active_[size_t(i)];
      real_.push_back(p * m + i);  // the real facts' rows of [B*M], increasing
      real_sample_.push_back(p);
    }
  }
  MG_CHECK(!real_.empty(), kName, ": no sample of the batch has a fact (memory_mask is all 0)");
  const auto r = int64_t(real_.size());
  for (Tensor* t : {&bag_a_, &bag_c_}) {
    t->reshape_reuse(Shape{r, vocab_}, dtype);
    t->zero();
  }
  MG_DISPATCH(dtype, T, {
    const T* ps = story.data<T>();
    const T* pm = mask.data<T>();
    const T* pq = query.data<T>();
    T* na = bag_a_.data<T>();
    T* nc = bag_c_.data<T>();
    T* sm = mask_.data<T>();
    T* sq = query_.data<T>();
    T* qm = query_mask_.data<T>();
    auto word = [&](T id, const char* field) {
      MG_CHECK(id >= 0 && id < T(vocab_) && id == std::floor(id), kName, ": batch field '", field,
               "' holds ", id, ", not a word id in [0, ", vocab_, ")");
      return int64_t(id);
    };
    int64_t row = 0;  // the next real fact's row of A and C
    for (int64_t p = 0; p < b; ++p) {
      const int64_t s = order_[size_t(p)];  // row p holds sample s
      for (int64_t k = 0; k < m; ++k) {
        sm[p * m + k] = pm[s * m + k];
        if (pm[s * m + k] == T(0)) continue;
        for (int64_t w = 0; w < j; ++w) {
          const int64_t id = word(ps[(s * m + k) * j + w], "story");
          if (id == 0) continue;  // nil: padding words add nothing
          na[row * vocab_ + id] += T(pe_a_[size_t(w)]);
          nc[row * vocab_ + id] += T(pe_c_[size_t(w)]);
        }
        ++row;
      }
      for (int64_t w = 0; w < j; ++w) {
        const int64_t id = word(pq[s * j + w], "query");
        sq[p * j + w] = T(id);
        qm[p * j + w] = id != 0 ? T(1) : T(0);
        if (id != 0) question_steps_ = std::max(question_steps_, w + 1);
        if (id == 0) word_all_[size_t(w)] = 0;
      }
      answer_.set(p, answer.at(s));
    }
  });
}

// Rows of `rows_first` [B, ...] (in the forward's order, most facts first) put back in the
// batch's order, for the trace.
Tensor DmnPlus::batch_order(const Tensor& sorted) const {
  Tensor out = sorted.clone();
  const int64_t b = sorted.dim(0), row = sorted.numel() / b;
  for (int64_t s = 0; s < b; ++s)
    for (int64_t e = 0; e < row; ++e) out.set(s * row + e, sorted.at(unsort_[size_t(s)] * row + e));
  return out;
}

// One step of `cell` on the rows that have fact i, the leading `a` of the b rows (rows in order of
// fact count); the others keep their state h. gate: the attention GRU's g_i [b, 1].
Var DmnPlus::step_active(Tape& tape, const DmnGru& cell, Var xw, int64_t column, Var h, int64_t a,
                         Var gate) const {
  const int64_t b = h.dim(0);
  if (a == b) return cell.step(tape, xw, column, h, gate);
  if (a == 0) return h;
  // Leading rows are views; only the rows that keep their state are copied.
  const Var fresh = cell.step(tape, slice(xw, 0, 0, a), column, slice(h, 0, 0, a),
                              gate.defined() ? slice(gate, 0, 0, a) : Var{});
  return concat({fresh, slice(h, 0, a, b - a)}, 0);
}

// Input fusion layer: ->f_i = GRU_fwd(f_i, ->f_{i-1}), <-f_i = GRU_bwd(f_i, <-f_{i+1}), both
// from zero states; a padding fact leaves a direction's state as it was (only the rows that have
// fact i step). Returns <->f_i = ->f_i + <-f_i, [B, M, H].
Var DmnPlus::fuse(Tape& tape, Var facts, Var real, int64_t b, int64_t m) {
  const int64_t H = hidden_, G = 3 * H;
  static const char kFwd = 0, kBwd = 0;
  std::vector<Var>& fwd = tape.var_scratch(&kFwd);
  std::vector<Var>& bwd = tape.var_scratch(&kBwd);
  fwd.assign(size_t(m), Var{});
  bwd.assign(size_t(m), Var{});
  for (int dir = 0; dir < 2; ++dir) {
    const DmnGru& cell = dir == 0 ? fusion_fwd_ : fusion_bwd_;
    // Every real fact's projection in one GEMM, put in its slot of [B, M*G] (padding slots 0:
    // no step reads them).
    const Var xw = reshape(scatter_add_rows(cell.project(facts), real, b * m), Shape{b, m * G});
    Var h = tape.constant(Shape{b, H}, facts.dtype(), 0.0);
    for (int64_t k = 0; k < m; ++k) {
      const int64_t i = dir == 0 ? k : m - 1 - k;
      h = step_active(tape, cell, xw, i * G, h, active_[size_t(i)]);
      (dir == 0 ? fwd : bwd)[size_t(i)] = h;
    }
  }
  return add(stack(fwd, 1), stack(bwd, 1));
}

// q = h_L of the question GRU over E[w_1..w_L] (padding words leave the state unchanged).
Var DmnPlus::read_question(Tape& tape, Var embedding, Var query, int64_t b) {
  const int64_t H = hidden_, G = 3 * H, L = question_steps_;
  Var h = tape.constant(Shape{b, H}, embedding.dtype(), 0.0);
  if (L == 0) return h;
  // The first L words of every question, embedded and projected in one GEMM.
  const Var ids = reshape(slice(query, 1, 0, L), Shape{b * L});
  const Var xw = reshape(question_.project(gather_rows(embedding, ids)), Shape{b, L * G});
  const Var qmask = tape.input(query_mask_);
  for (int64_t t = 0; t < L; ++t) {
    const Var fresh = question_.step(tape, xw, t * G, h);
    h = word_all_[size_t(t)] ? fresh : where(slice(qmask, 1, t, 1), fresh, h);
  }
  return h;
}

// (l2 / 2) sum_W |W|^2 over the weights (biases excluded).
Var DmnPlus::weight_penalty(Tape& tape) const {
  Var total;
  for (Parameter* p : weights_) {
    const Var w = tape.param(*p);
    const Var s = sum(mul(w, w));
    total = total.defined() ? add(total, s) : s;
  }
  return scale(total, 0.5 * l2_);
}

ForwardResult DmnPlus::forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) {
  const DType dtype = params_.dtype();
  const qa::MemoryBatch in = qa::read_memory_batch(batch, kName, sentence_len_, dtype);
  const Tensor &story = in.story, &mask = in.memory_mask, &query = in.query, &answer = in.answer;
  const int64_t b = in.b, m = in.m;
  // The forward runs on the samples in order of fact count, most first (build_inputs): the
  // steps at fact i then compute the leading rows that have one. The loss does not depend on
  // the order; the predictions are put back in the batch's.
  build_inputs(story, mask, query, answer);
  const int64_t H = hidden_;
  const Var E = tape.param(*embedding_);
  const Var mk = tape.input(mask_);

  // Input module: f = A E + b o (C E) (the position encoding, rank 2) for the R real facts,
  // dropout, fusion.
  const Var real = layers::index_leaf(tape, real_, dtype);  // their rows of [B*M]
  const Var f0 = add(matmul(tape.input(bag_a_), E), mul(matmul(tape.input(bag_c_), E),
                                                        tape.input(pe_b_)));  // [R, d]
  const Var f_in = dropout(f0, dropout_, opts.training);
  const Var F =
      gather_rows(reshape(fuse(tape, f_in, real, b, m), Shape{b * m, H}), real);  // [R, H]
  const Var q = read_question(tape, E, tape.input(query_), b);

  // Episodic memory, over the real facts. The q half of W^(1) z: [f o q ; |f - q|] W1_q + b1,
  // once for every pass.
  const Var sample = layers::index_leaf(tape, real_sample_, dtype);  // each real fact's row
  int64_t calls = 0;
  auto features = [&](Var v) {  // [f o v ; |f - v|] as [R, 2H]
    const Var vr = gather_rows(v, sample);
    const Var diff = absolute(tape, sub(F, vr), abs_sign_[size_t(calls++)]);
    return concat({mul(F, vr), diff}, 1);
  };
  const Var att_q = addmm(tape.param(*att_b1_), features(q), tape.param(*att_w1_q_));
  const Var xw_episode =
      reshape(scatter_add_rows(episode_.project(F), real, b * m), Shape{b, m * 2 * H});
  const bool all_facts = active_.back() == b;
  if (!all_facts && (!neg_.defined() || neg_.dtype() != dtype))
    neg_ = Tensor::full(Shape{1}, dtype, -1e30);
  Var mem = q;
  for (int64_t t = 0; t < passes_; ++t) {
    // Z^t = W^(2) tanh(W^(1) z^t + b^(1));  g^t = softmax over the real facts (b^(2): none).
    const Var hidden = tanh(add(att_q, matmul(features(mem), tape.param(*att_w1_m_))));
    const Var scores =
        reshape(scatter_add_rows(att_score_(tape, hidden), real, b * m), Shape{b, m});
    Var g;
    if (all_facts)
      g = softmax(scores);
    else  // padding facts score -1e30: weight exactly 0 (and 0 if a sample had no fact at all)
      g = mul(softmax(where(mk, scores, tape.input(neg_))), mk);
    // c^t: the attention GRU over the facts, gate g_i^t at fact i.
    Var h = tape.constant(Shape{b, H}, dtype, 0.0);
    // Padding facts have g_i = 0 and would leave h unchanged: only the rows with fact i step.
    for (int64_t i = 0; i < m; ++i)
      h = step_active(tape, episode_, xw_episode, i * 2 * H, h, active_[size_t(i)],
                      slice(g, 1, i, 1));
    // m^t = ReLU(W^t [m^{t-1} ; c^t ; q] + b).
    const layers::Linear& update = memory_update_[size_t(tied_update_ ? 0 : t)];
    mem = relu(update(tape, concat({mem, h, q}, 1)));
    if (opts.trace) {
      char name[48];
      std::snprintf(name, sizeof name, "episode/t%lld/attention", (long long)(t + 1));
      opts.trace->record(name, batch_order(g.value()));
      std::snprintf(name, sizeof name, "episode/t%lld/memory", (long long)(t + 1));
      opts.trace->record(name, batch_order(mem.value()));
    }
  }

  // Answer module.
  const Var m_out = dropout(mem, dropout_, opts.training);
  ForwardResult r;
  if (gru_answer_) {
    const Var a = answer_gru_.step(tape, answer_gru_.project(q), 0, m_out);
    r.predictions = answer_out_(tape, a);
  } else {
    r.predictions = answer_out_(tape, concat({m_out, q}, 1));
  }
  r.loss = cross_entropy(r.predictions, tape.input(answer_));
  if (sorted_) r.predictions = gather_rows(r.predictions, layers::index_leaf(tape, unsort_, dtype));
  if (opts.trace) opts.trace->record("answer_logits", r.predictions.value());
  if (sum_loss_) r.loss = scale(r.loss, double(b));
  if (l2_ > 0) r.loss = add(r.loss, weight_penalty(tape));
  return r;
}

namespace {

// The shared bAbI check batch's sizes (models/qa/babi_check.hpp: 4, 2 and 3 facts, so the forward
// reorders the samples; padding facts and words; a question with a nil word).
nlohmann::json check_config(const char* variant) {
  nlohmann::json c = qa::babi_check_dims();
  c.update({{"variant", variant},
            {"embedding_dim", 5},
            {"hidden", 4},
            {"passes", 3},
            {"dropout", 0.25},
            {"l2", 0.01},
            {"embedding_init", 1.0}});
  return c;
}

const bool kRegistered = [] {
  nlohmann::json linear = check_config("linear-answer-tied-memn2n-pe-mean-loss");
  linear["answer"] = "linear";
  linear["tied_memory_update"] = true;
  linear["position_encoding"] = "memn2n";
  linear["loss"] = "mean";
  linear["passes"] = 2;
  linear["dropout"] = 0.0;
  linear["l2"] = 0.0;
  register_model(
      {.name = kName,
       .summary = "Dynamic Memory Network+ (Xiong et al. 2016): positional-encoded facts, input "
                  "fusion bi-GRU, attention-GRU episodic memory (3 passes, untied ReLU update), "
                  "GRU answer; bAbI QA",
       .create = [](const nlohmann::json& config, DType dtype, uint64_t seed)
           -> std::unique_ptr<Model> { return std::make_unique<DmnPlus>(config, dtype, seed); },
       .default_config = kDefaults,
       // DMN+ section 5.1: Adam at 1e-3, batch 100, up to 256 epochs, stopping after 20 epochs
       // without a better validation loss; our early stopping watches the validation accuracy
       // that also selects the epoch (docs/dmn-plus.md).
       // Up to 256 epochs, stopped 20 after the epoch of least validation loss, which is kept.
       .train_defaults = {{"optimizer", "adam"},
                          {"lr", 1e-3},
                          {"batch", 100},
                          {"epochs", 256},
                          {"patience", 20},
                          {"select_by", "valid_loss"}},
       .check_configs = {check_config("gru-answer-untied-paper-pe-dropout-l2"), linear},
       .check_batch = qa::make_babi_check_batch,
       // The paper's input, the last 100 sentences before the question; the validation questions
       // are scored every epoch (their accuracy is logged beside the loss; docs/dmn-plus.md).
       .task_settings = {{"babi", {{"memory_size", 100}, {"select_epoch", "valid"}}}}});
  return true;
}();

}  // namespace
}  // namespace memgrad
