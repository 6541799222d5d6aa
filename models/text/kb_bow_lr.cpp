// Bag-of-words logistic regression (see kb_bow_lr.hpp).
#include "models/text/kb_bow_lr.hpp"

#include "models/layers/config.hpp"
#include "models/text/kb_batch.hpp"
#include "ops/ops.hpp"

namespace memgrad::text {
namespace {

const nlohmann::json kDefaults = {
    {"vocab_size", 20000}, {"labels", 50}, {"l2", 0.0}, {"bag", "mean"}, {"init_range", 0.0}};

}  // namespace

KbBowLR::KbBowLR(const nlohmann::json& config, DType dtype, uint64_t seed) : Model(dtype) {
  config_ = layers::merge_config("bow-lr", kDefaults, config);
  vocab_ = layers::config_int(config_, "bow-lr", "vocab_size");
  labels_ = layers::config_int(config_, "bow-lr", "labels");
  l2_ = config_.at("l2").get<double>();
  MG_CHECK(l2_ >= 0, "bow-lr: l2 must be >= 0");
  const std::string bag = config_.at("bag").get<std::string>();
  MG_CHECK(bag == "sum" || bag == "mean", "bow-lr: bag must be \"sum\" or \"mean\"");
  mean_ = bag == "mean";
  const double r = config_.at("init_range").get<double>();
  MG_CHECK(r >= 0, "bow-lr: init_range must be >= 0");
  Rng rng(seed);
  w_ = &params_.add_uniform("W", Shape{vocab_, labels_}, -r, r, rng);
  b_ = &params_.add("b", Shape{labels_});
}

ForwardResult KbBowLR::forward(Tape& tape, const Batch& batch, const ForwardOptions&) {
  const Tensor& note = batch.get("note");
  const Tensor& labels = batch.get("labels");
  MG_CHECK(note.rank() == 2 && note.dim(1) == vocab_ && labels.rank() == 2 &&
               labels.dim(0) == note.dim(0) && labels.dim(1) == labels_,
           "bow-lr: batch fields note ", note.shape(), " and labels ", labels.shape(),
           " do not fit [B, ", vocab_, "] and [B, ", labels_, "]");
  Var x = tape.input(note);
  if (mean_) x = div(x, add_scalar(sum_axis(x, 1, true), 1e-9));
  const Var w = tape.param(*w_);
  ForwardResult r;
  r.predictions = addmm(tape.param(*b_), x, w);
  r.loss = scale(bce_with_logits(r.predictions, tape.input(labels)), double(labels_));
  if (l2_ > 0) r.loss = add(r.loss, scale(sum(mul(w, w)), 0.5 * l2_));
  return r;
}

namespace {

const bool kRegistered = [] {
  const nlohmann::json tiny = {
      {"variant", "l2-mean"}, {"vocab_size", 7}, {"labels", 4}, {"l2", 0.1}, {"init_range", 0.3}};
  nlohmann::json sum_bag = tiny;
  sum_bag["variant"] = "sum";
  sum_bag["bag"] = "sum";
  sum_bag["l2"] = 0.0;
  register_model(
      {.name = "bow-lr",
       .summary = "the note's bag of words into a logistic layer, one sigmoid per "
                  "label: the knowledge-base-free baseline of task codiesp-kb",
       .create = [](const nlohmann::json& c, DType d, uint64_t s) -> std::unique_ptr<Model> {
         return std::make_unique<KbBowLR>(c, d, s);
       },
       .default_config = kDefaults,
       .train_defaults =
           {{"optimizer", "adam"}, {"lr", 1e-2}, {"batch", 100}, {"epochs", 40}, {"iterations", 0}},
       .check_configs = {tiny, sum_bag},
       .check_batch = [](Rng& rng, DType dtype,
                         Batch& batch) { make_kb_check_batch(rng, dtype, batch, 3, 4, 7); }});
  return true;
}();

}  // namespace
}  // namespace memgrad::text
