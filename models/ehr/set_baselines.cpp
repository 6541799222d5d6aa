// Binary relevance and classifier chains on the bag of codes (see set_baselines.hpp).
#include "models/ehr/set_baselines.hpp"

#include <numeric>

#include "engine/json_text.hpp"
#include "models/dnc/two_view.hpp"
#include "models/layers/batch_fields.hpp"
#include "models/layers/config.hpp"
#include "ops/ops.hpp"

namespace memgrad {
namespace {

nlohmann::json defaults(bool chain) {
  nlohmann::json d = {{"input_vocab", 51}, {"input_vocab2", 0}, {"output_vocab", 101},
                      {"output", "set"},   {"views", "both"},   {"l2", 1e-4},
                      {"init_range", 0.0}};
  if (chain) d["chain_seed"] = 1;
  return d;
}

}  // namespace

BagOfCodes::BagOfCodes(bool chain, const nlohmann::json& config, DType dtype, uint64_t seed)
    : Model(dtype), chain_(chain), name_(chain ? "classifier-chains" : "binary-relevance") {
  const std::string& model = name_;
  config_ = layers::merge_config(model, defaults(chain), config);
  MG_CHECK(config_.at("output") == "set", model,
           ": output must be \"set\" (a multi-label baseline), got ",
           dump_json(config_.at("output")));
  use_ = dnc::views_read(config_, model);
  labels_ = layers::config_int(config_, model, "output_vocab");
  l2_ = config_.at("l2").get<double>();
  MG_CHECK(l2_ >= 0, model, ": l2 must be >= 0, got ", l2_);
  const double r = config_.at("init_range").get<double>();
  MG_CHECK(r >= 0, model, ": init_range must be >= 0, got ", r);
  const int64_t v1 = layers::config_int(config_, model, "input_vocab");
  const int64_t v2 = layers::config_int(config_, model, "input_vocab2", 0);
  const int64_t vocab[2] = {v1, v2 == 0 ? v1 : v2};
  Rng rng(seed);
  for (int i = 0; i < 2; ++i)
    if (use_[i])
      w_[i] =
          &params_.add_uniform(i == 0 ? "w_dx" : "w_proc", Shape{vocab[i], labels_}, -r, r, rng);
  b_ = &params_.add("b", Shape{labels_});
  if (chain_) {
    c_ = &params_.add_uniform("chain", Shape{labels_, labels_}, -r, r, rng);
    order_.resize(size_t(labels_));
    std::iota(order_.begin(), order_.end(), 0);
    Rng order_rng(uint64_t(config_.at("chain_seed").get<int64_t>()), 0x0c4a1);
    for (int64_t k = labels_ - 1; k > 0; --k)
      std::swap(order_[size_t(k)], order_[size_t(order_rng.below(uint64_t(k + 1)))]);
    before_ = Tensor::zeros(Shape{labels_, labels_}, dtype);
    for (int64_t a = 0; a < labels_; ++a)
      for (int64_t b = a + 1; b < labels_; ++b)
        before_.set(order_[size_t(a)] * labels_ + order_[size_t(b)], 1);
  }
}

// z = b + sum over present codes of their rows of W (+ the chain term).
ForwardResult BagOfCodes::forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) {
  const dnc::Views v = dnc::read_views(tape, batch, name_);
  const Tensor& y = layers::field(batch, name_, "labels", 2);
  layers::expect_shape(name_, "labels", y, Shape{v.batch, labels_});
  Var z = tape.param(*b_);
  Var penalty;
  auto add_penalty = [&](Var w) {
    Var p = scale(sum(mul(w, w)), 0.5 * l2_);
    penalty = penalty.defined() ? add(penalty, p) : p;
  };
  for (int i = 0; i < 2; ++i) {
    if (!use_[i]) continue;
    Var w = tape.param(*w_[i]);
    const Tensor& ids = v.x[i].value();
    for (int64_t k = 0; k < ids.numel(); ++k)
      MG_CHECK(ids.at(k) >= 0 && ids.at(k) < double(w_[i]->value.dim(0)), name_, ": token id ",
               ids.at(k), " is not in [0, ", w_[i]->value.dim(0),
               "): the data has more codes than the model's vocabulary setting");
    Var rows = gather_rows(w, v.x[i]);  // [B, L_i, labels]
    Var mask = reshape(v.mask[i], Shape{v.batch, v.length[i], 1});
    z = add(z, sum_axis(mul(rows, mask), 1));
    if (l2_ > 0) add_penalty(w);
  }
  Var target = tape.input(y);
  if (chain_) {
    // The parameters may have been converted (float64 gradient checks): P follows them.
    if (before_.dtype() != c_->value.dtype()) before_ = before_.to(c_->value.dtype());
    Var c = mul(tape.param(*c_), tape.input(before_));
    if (l2_ > 0) add_penalty(tape.param(*c_));
    if (opts.training) {
      z = add(z, matmul(target, c));
    } else {
      // The chain in order, each label seeing the predictions before it.
      Tensor logits = z.value().clone();
      const Tensor& cv = c.value();
      std::vector<uint8_t> on(static_cast<size_t>(labels_));
      for (int64_t b = 0; b < v.batch; ++b) {
        std::fill(on.begin(), on.end(), 0);
        for (int64_t k : order_) {
          double s = logits.at(b * labels_ + k);
          for (int64_t j = 0; j < labels_; ++j)
            if (on[size_t(j)]) s += cv.at(j * labels_ + k);
          logits.set(b * labels_ + k, s);
          on[size_t(k)] = s > 0;
        }
      }
      z = tape.input(logits);
    }
  }
  ForwardResult r;
  r.predictions = z;
  r.loss = bce_with_logits(z, target);
  if (penalty.defined()) r.loss = add(r.loss, penalty);
  return r;
}

namespace {

void register_bag(bool chain, const char* summary) {
  nlohmann::json tiny = {{"input_vocab", 7},  {"input_vocab2", 5}, {"output_vocab", 9},
                         {"init_range", 0.3}, {"l2", 0.1},         {"variant", "both"}};
  nlohmann::json dx = tiny, plain = tiny;
  dx["views"] = "dx";
  dx["variant"] = "dx-only";
  plain["l2"] = 0.0;
  plain["variant"] = "no-penalty";
  register_model(
      {.name = chain ? "classifier-chains" : "binary-relevance",
       .summary = summary,
       .create = [chain](const nlohmann::json& c, DType d,
                         uint64_t s) { return std::make_unique<BagOfCodes>(chain, c, d, s); },
       .default_config = defaults(chain),
       .train_defaults =
           {{"optimizer", "adam"}, {"lr", 1e-2}, {"batch", 32}, {"epochs", 40}, {"iterations", 0}},
       .check_configs = {tiny, dx, plain},
       .check_batch = [](Rng& rng, DType dtype,
                         Batch& batch) { dnc::make_check_batch(rng, dtype, batch, 7, 9, 5); }});
}

const bool kRegistered = [] {
  register_bag(false,
               "binary relevance: one logistic regression per label on the bag of an admission's "
               "codes (DMNC paper, Table 3 baseline; task mimic-drugs)");
  register_bag(true,
               "classifier chains: logistic regressions in a fixed random label order, each "
               "seeing the labels before it (Read et al. 2009; DMNC paper, Table 3 baseline)");
  return true;
}();

}  // namespace
}  // namespace memgrad
