// Memory networks over a knowledge base (see kb_memnn.hpp).
#include "models/text/kb_memnn.hpp"

#include "models/layers/config.hpp"
#include "models/text/kb_batch.hpp"
#include "ops/ops.hpp"

namespace memgrad::text {
namespace {

const char* kind_name(KbModelKind k) {
  switch (k) {
    case KbModelKind::memn2n:
      return "memn2n-kb";
    case KbModelKind::kv:
      return "kv-memnn";
    case KbModelKind::averaged:
      return "a-memnn";
    case KbModelKind::condensed:
      return "c-memnn";
  }
  return "?";
}

// The paper's hyper-parameters ("Experiments", "Training"); vocab_size and labels are the task's.
nlohmann::json defaults(KbModelKind k) {
  const bool paper_model = k == KbModelKind::averaged || k == KbModelKind::condensed;
  return {{"vocab_size", 20000},   // "20K after removing common stop-words"
          {"labels", 50},          // R: the 50 or 100 most common diagnoses
          {"embedding_dim", 500},  // K: "a common dimension of 500 for all embedding matrices"
          {"title_dim", 32},       // "an embedding of dimension 32 ... for the wiki-titles"
          {"gate_hidden", 300},    // gated addressing's FNN ("memory slot of dimension 300")
          {"hops", 3},             // 3, 4 or 5, trained separately
          {"addressing", paper_model ? "gated" : "softmax"},
          {"slot_loss", paper_model ? 1.0 : 0.0},  // weight of the memory-slot cross entropy
          {"dropout", paper_model ? 0.5 : 0.0},    // on the output-to-decision layer
          {"bag", "sum"},  // Φ(d) = Σ_j E[w_j]; "mean" divides by the word count
          {"init_std", 0.1}};
}

// prefix + n, appended piece by piece (g++ 12 warns falsely, -Wrestrict, on "T" + to_string(n)).
std::string numbered(const char* prefix, int64_t n) {
  std::string s = prefix;
  s += std::to_string(n);
  return s;
}

}  // namespace

std::string KbMemNN::name() const { return kind_name(kind_); }

KbMemNN::KbMemNN(KbModelKind kind, const nlohmann::json& config, DType dtype, uint64_t seed)
    : Model(dtype), kind_(kind) {
  const std::string n = kind_name(kind);
  config_ = layers::merge_config(n, defaults(kind), config);
  vocab_ = layers::config_int(config_, n, "vocab_size");
  labels_ = layers::config_int(config_, n, "labels");
  dim_ = layers::config_int(config_, n, "embedding_dim", 2);
  title_dim_ = layers::config_int(config_, n, "title_dim");
  hidden_ = layers::config_int(config_, n, "gate_hidden");
  hops_ = layers::config_int(config_, n, "hops");
  const std::string addressing = config_.at("addressing").get<std::string>();
  MG_CHECK(addressing == "softmax" || addressing == "gated", n,
           ": addressing must be \"softmax\" or \"gated\", got \"", addressing, "\"");
  gated_ = addressing == "gated";
  slot_loss_ = config_.at("slot_loss").get<double>();
  MG_CHECK(slot_loss_ >= 0 && (gated_ || slot_loss_ == 0), n,
           ": slot_loss must be >= 0, and 0 without gated addressing (it reads the gates)");
  dropout_ = layers::config_dropout(config_, n);
  const std::string bag = config_.at("bag").get<std::string>();
  MG_CHECK(bag == "sum" || bag == "mean", n, ": bag must be \"sum\" or \"mean\"");
  const double init_std = config_.at("init_std").get<double>();
  MG_CHECK(init_std > 0, n, ": init_std must be > 0");

  Rng rng(seed);
  if (kind_ == KbModelKind::memn2n) {
    // T_0 = B (the note) = A^1 (hop 1's keys); hop k reads keys T_{k-1}, values T_k.
    for (int64_t t = 0; t <= hops_; ++t)
      hop_tables_.push_back(
          &params_.add_normal(numbered("T", t), Shape{vocab_, dim_}, init_std, rng));
  } else {
    b_table_ = &params_.add_normal("B", Shape{vocab_, dim_}, init_std, rng);
    a_table_ = &params_.add_normal("A", Shape{vocab_, dim_}, init_std, rng);
    c_table_ = &params_.add_normal("C", Shape{vocab_, title_dim_}, init_std, rng);
    title_proj_ = layers::Linear(params_, "P", title_dim_, dim_, rng, false);
  }
  if (gated_) {
    gate_u_ = layers::Linear(params_, "gate.u", dim_, hidden_, rng, true);
    gate_m_ = layers::Linear(params_, "gate.m", dim_, hidden_, rng, false);
    gate_x_ = layers::Linear(params_, "gate.x", dim_, hidden_, rng, false);
    gate_out_ = layers::Linear(params_, "gate.out", hidden_, 1, rng, true);
  }
  if (kind_ == KbModelKind::kv)
    for (int64_t k = 1; k <= hops_; ++k)
      rotations_.emplace_back(params_, numbered("R", k), dim_, dim_, rng, false);
  int64_t width = dim_;  // width of ũ
  if (kind_ == KbModelKind::condensed)
    for (int64_t k = 1; k <= hops_; ++k) {
      MG_CHECK(width / 2 >= 1, n, ": embedding_dim too small to halve");
      condense_.emplace_back(params_, numbered("D", k), width, width / 2, rng, false);
      width = dim_ + width / 2;
    }
  w_ = layers::Linear(params_, "W", dim_, labels_, rng, true);
  if (kind_ == KbModelKind::averaged || kind_ == KbModelKind::condensed)
    out_ = layers::Linear(params_, "F", labels_ + width, labels_, rng, true);
}

// Φ(d) for every row of counts [N, V]: counts · table ([N, D]); "mean" bags divide by the count.
Var KbMemNN::embed(Tape& tape, const Tensor& counts, Parameter& table) const {
  const Var c = tape.input(counts);
  const Var e = matmul(c, tape.param(table));
  if (config_.at("bag").get<std::string>() == "sum") return e;
  return div(e, add_scalar(sum_axis(c, 1, true), 1e-9));
}

std::pair<Var, Var> KbMemNN::address(Tape& tape, Var u, Var m) const {
  const int64_t b = u.value().dim(0), l = m.value().dim(0);
  if (!gated_) return {softmax(matmul(u, transpose(m))), Var{}};
  // g_i = w2 · relu(W_u u + W_m m_i + W_x (u ⊙ m_i) + b1) + b2 for all B x L pairs at once.
  const Var pairs = mul(reshape(u, Shape{b, 1, dim_}), reshape(m, Shape{1, l, dim_}));
  const Var pre = add(add(gate_x_(tape, pairs), reshape(gate_u_(tape, u), Shape{b, 1, hidden_})),
                      reshape(gate_m_(tape, m), Shape{1, l, hidden_}));
  const Var g = reshape(gate_out_(tape, relu(pre)), Shape{b, l});
  return {sigmoid(g), g};
}

ForwardResult KbMemNN::forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) {
  const KbBatch in = read_kb_batch(batch, name(), vocab_, labels_);
  const bool memn2n = kind_ == KbModelKind::memn2n;
  Var u = embed(tape, *in.note, memn2n ? *hop_tables_[0] : *b_table_);  // u^1 [B, K]
  Var m, c;
  if (!memn2n) {
    m = embed(tape, *in.keys, *a_table_);                       // [L, K]
    c = title_proj_(tape, embed(tape, *in.values, *c_table_));  // [L, K]
  }
  const Var y = tape.input(*in.labels);
  Var avg = u;  // ũ^1 = u^1
  Var slot_loss;
  for (int64_t k = 0; k < hops_; ++k) {
    if (memn2n) {
      m = k == 0 ? embed(tape, *in.keys, *hop_tables_[0]) : c;  // adjacent tying
      c = embed(tape, *in.keys, *hop_tables_[size_t(k + 1)]);
    }
    const auto [p, g] = address(tape, u, m);
    const std::string hop = numbered("hop", k + 1);
    // Gated addressing: p holds the gates σ(g_i) themselves.
    if (opts.trace) opts.trace->record(hop + (gated_ ? "/gates" : "/attention"), p.value());
    if (g.defined() && slot_loss_ > 0) {
      const Var term = bce_with_logits(g, y);
      slot_loss = slot_loss.defined() ? add(slot_loss, term) : term;
    }
    const Var o = matmul(p, c);  // Eq. 2: o = Σ_i p_i c_i
    u = add(u, o);               // Eq. 3
    if (kind_ == KbModelKind::kv) u = rotations_[size_t(k)](tape, u);
    if (kind_ == KbModelKind::averaged) avg = add(u, scale(avg, 0.5));
    if (kind_ == KbModelKind::condensed) avg = concat({u, condense_[size_t(k)](tape, avg)}, 1);
  }
  Var logits = w_(tape, u);
  if (out_.out() > 0) {
    const Var z = dropout(concat({logits, avg}, 1), dropout_, opts.training);
    logits = out_(tape, z);
  }
  if (opts.trace) opts.trace->record("logits", logits.value());
  ForwardResult r;
  r.predictions = logits;
  // Σ over labels, mean over notes: L x the mean over elements.
  r.loss = scale(bce_with_logits(logits, y), double(labels_));
  if (slot_loss.defined()) r.loss = add(r.loss, scale(slot_loss, slot_loss_ * double(labels_)));
  return r;
}

namespace {

// Tiny sizes for the gradient checks: 3 notes, 4 labels, 7 words.
constexpr int64_t kB = 3, kL = 4, kV = 7;

nlohmann::json check_config(const char* variant, int64_t hops) {
  return {{"variant", variant}, {"vocab_size", kV}, {"labels", kL},
          {"embedding_dim", 4}, {"title_dim", 3},   {"gate_hidden", 5},
          {"hops", hops},       {"dropout", 0.0},   {"init_std", 0.3}};
}

void register_kind(KbModelKind kind, const std::string& summary,
                   std::vector<nlohmann::json> checks) {
  register_model(
      {.name = kind_name(kind),
       .summary = summary,
       .create = [kind](const nlohmann::json& config, DType dtype,
                        uint64_t seed) -> std::unique_ptr<Model> {
         return std::make_unique<KbMemNN>(kind, config, dtype, seed);
       },
       .default_config = defaults(kind),
       // "Training": Adam 0.001, batch 100, gradient norm below 20.
       .train_defaults = {{"optimizer", "adam"},
                          {"lr", 1e-3},
                          {"batch", 100},
                          {"epochs", 40},
                          {"iterations", 0},
                          {"clip_norm", 20.0}},
       .check_configs = std::move(checks),
       .check_batch = [](Rng& rng, DType dtype,
                         Batch& batch) { make_kb_check_batch(rng, dtype, batch, kB, kL, kV); }});
}

const bool kRegistered = [] {
  nlohmann::json mean_bag = check_config("mean-bag", 2);
  mean_bag["bag"] = "mean";
  register_kind(KbModelKind::memn2n,
                "End-to-End Memory Network over a knowledge base of one page per diagnosis, "
                "multi-label sigmoid output (C-MemNN paper's baseline; task codiesp-kb)",
                {check_config("3-hops", 3), mean_bag});
  nlohmann::json kv_gated = check_config("gated", 2);
  kv_gated["addressing"] = "gated";
  kv_gated["slot_loss"] = 0.5;
  register_kind(KbModelKind::kv,
                "Key-Value Memory Network (Miller et al. 2016): pages as keys, titles as values, "
                "R_k per hop, multi-label (task codiesp-kb)",
                {check_config("3-hops", 3), kv_gated});
  nlohmann::json a_dropout = check_config("dropout", 3);
  a_dropout["dropout"] = 0.5;
  register_kind(KbModelKind::averaged,
                "Averaged Memory Network (Hasan et al. 2017): gated addressing, averaged state "
                "u~ = u + u~/2 per hop (task codiesp-kb)",
                {check_config("3-hops", 3), a_dropout});
  nlohmann::json c_soft = check_config("softmax-no-slot-loss", 3);
  c_soft["addressing"] = "softmax";
  c_soft["slot_loss"] = 0.0;
  register_kind(KbModelKind::condensed,
                "Condensed Memory Network (Hasan et al. 2017): gated addressing, condensed state "
                "[u ; D u~] per hop (Eq. 4), multi-label (task codiesp-kb)",
                {check_config("5-hops", 5), c_soft, a_dropout});
  return true;
}();

}  // namespace
}  // namespace memgrad::text
