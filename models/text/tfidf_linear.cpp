// The tf-idf linear baselines' shared model (see tfidf_linear.hpp).
#include "models/text/tfidf_linear.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "engine/threads.hpp"
#include "models/layers/config.hpp"
#include "models/text/text_inputs.hpp"
#include "ops/ops.hpp"

namespace memgrad::text {

nlohmann::json TfIdfLinear::base_defaults(nlohmann::json own) {
  nlohmann::json d = task_dims();
  d["tolerance"] = 1e-6;
  d["max_sweeps"] = 100000;
  d["init_range"] = 0.0;
  d["select"] = "global";
  d.update(own);
  return d;
}

TfIdfLinear::TfIdfLinear(std::string name, nlohmann::json defaults, const nlohmann::json& config,
                         DType dtype, uint64_t seed)
    : Model(dtype), name_(std::move(name)), notes_(0, 0), dev_notes_(0, 0) {
  config_ = layers::merge_config(name_, defaults, config);
  vocab_ = layers::config_int(config_, name_, "input_vocab", 2);
  labels_ = layers::config_int(config_, name_, "labels");
  solver_.tolerance = config_.at("tolerance").get<double>();
  solver_.max_sweeps = layers::config_int(config_, name_, "max_sweeps");
  MG_CHECK(solver_.tolerance > 0 && solver_.tolerance < 1, name_,
           ": tolerance (relative duality gap) must be in (0, 1), got ", solver_.tolerance);
  const double r = config_.at("init_range").get<double>();
  MG_CHECK(r >= 0, name_, ": init_range must be >= 0, got ", r);
  Rng rng(seed);
  w_ = &params_.add_uniform("W", Shape{vocab_, labels_}, -r, r, rng);
  b_ = &params_.add_uniform("b", Shape{labels_}, -r, r, rng);
  idf_ = &params_.add("idf", Shape{vocab_});
  idf_->value.fill(1.0);
  notes_ = NoteCollector(vocab_, labels_);
  dev_notes_ = NoteCollector(vocab_, labels_);
  const std::string select = config_.at("select").get<std::string>();
  MG_CHECK(select == "global" || select == "per_label", name_,
           ": select must be \"global\" or \"per_label\", got \"", select, "\"");
  per_label_ = select == "per_label";
  best_dev_loss_.assign(static_cast<size_t>(labels_), INFINITY);
  kept_point_.assign(static_cast<size_t>(labels_), 0);
}

// x = normalize(tf idf) with tf filled from the word ids (data: no gradient), as tfidf.hpp.
ForwardResult TfIdfLinear::forward(Tape& tape, const Batch& batch, const ForwardOptions&) {
  const NoteFields f = note_fields(batch, name_, labels_);
  const int64_t B = f.ids.dim(0), T = f.ids.dim(1);
  const Var counts = tape.constant(Shape{B, vocab_}, f.ids.dtype(), 0.0);
  Tensor& c = tape.value(counts.id);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T && f.mask.at(b * T + t) != 0; ++t) {
      const int64_t at = b * vocab_ + word_id(f.ids, b * T + t, vocab_, name_, b, t);
      c.set(at, c.at(at) + 1);
    }
  for (int64_t i = 0; i < c.numel(); ++i)
    if (c.at(i) > 0) c.set(i, tf_weight(c.at(i)));
  const Var x = normalize(mul(counts, tape.param(*idf_)), kRowEps);
  ForwardResult r;
  r.predictions = addmm(tape.param(*b_), x, tape.param(*w_));
  r.loss = data_loss(r.predictions, tape.input(f.y));
  return r;
}

void TfIdfLinear::observe(const Batch& batch, bool last) {
  if (data_) return;
  notes_.add(batch, name_.c_str());
  if (!last) return;
  data_ = std::make_unique<TfIdfData>(notes_.build());
  notes_.clear();
}

void TfIdfLinear::observe_validation(const Batch& batch, bool last) {
  if (dev_) return;
  dev_notes_.add(batch, name_.c_str());
  if (!last) return;
  MG_CHECK(data_, name_, ": validation notes before the training notes");
  dev_ = std::make_unique<TfIdfData>(dev_notes_.build(&data_->idf));
  dev_notes_.clear();
}

double TfIdfLinear::dev_loss_of(int64_t label, std::span<const double> w, double b) const {
  const TfIdfData& d = *dev_;
  std::vector<double> margins(static_cast<size_t>(d.notes), b);
  for (int64_t i = 0; i < d.notes; ++i)
    for (int64_t k = d.rows.start[size_t(i)]; k < d.rows.start[size_t(i) + 1]; ++k)
      margins[size_t(i)] += w[size_t(d.rows.index[size_t(k)])] * d.rows.value[size_t(k)];
  return label_loss(margins, d.label_column(label));
}

nlohmann::json TfIdfLinear::training_state() const {
  if (!per_label_) return nlohmann::json::object();
  return {{"best_dev_loss", best_dev_loss_}, {"kept_point", kept_point_}};
}

void TfIdfLinear::set_training_state(const nlohmann::json& state) {
  if (!per_label_ || !state.contains("best_dev_loss")) return;
  best_dev_loss_ = state.at("best_dev_loss").get<std::vector<double>>();
  kept_point_ = state.at("kept_point").get<std::vector<int64_t>>();
  MG_CHECK(int64_t(best_dev_loss_.size()) == labels_ && int64_t(kept_point_.size()) == labels_,
           name_, ": model state for ", best_dev_loss_.size(), " labels, the model has ", labels_);
}

std::string TfIdfLinear::on_epoch_end(int64_t epoch, double) {
  MG_CHECK(data_, name_, ": epoch ", epoch, " ended before the model saw the training notes");
  MG_CHECK(!per_label_ || (dev_ && dev_->notes > 0), name_,
           ": select per_label needs the task's validation notes, and it has none");
  const TfIdfData& d = *data_;
  for (int64_t v = 0; v < vocab_; ++v) idf_->value.set(v, d.idf[size_t(v)]);
  const auto L = static_cast<size_t>(labels_), V = static_cast<size_t>(vocab_);
  std::vector<std::vector<double>> w(L, std::vector<double>(V, 0.0));
  std::vector<double> b(L, 0.0);
  std::vector<SolverReport> reports(L);
  for (int64_t l = 0; l < labels_; ++l) {  // the current solution is the warm start
    for (int64_t v = 0; v < vocab_; ++v) w[size_t(l)][size_t(v)] = w_->value.at(v * labels_ + l);
    b[size_t(l)] = b_->value.at(l);
  }
  const std::clock_t cpu0 = std::clock();
  std::vector<char> take(L, 1);  // whether label l keeps this point's solution
  parallel_for_each(labels_, [&](int64_t l) {
    reports[size_t(l)] = solve_label(epoch, l, w[size_t(l)], b[size_t(l)]);
    if (!per_label_) return;
    const double loss = dev_loss_of(l, w[size_t(l)], b[size_t(l)]);
    take[size_t(l)] = loss < best_dev_loss_[size_t(l)];
    if (take[size_t(l)]) best_dev_loss_[size_t(l)] = loss, kept_point_[size_t(l)] = epoch;
  });
  const double cpu_s = double(std::clock() - cpu0) / CLOCKS_PER_SEC;
  int64_t nonzero = 0, sweeps = 0, unconverged = 0;
  double gap = 0;
  int64_t taken = 0;
  for (int64_t l = 0; l < labels_; ++l) {
    taken += take[size_t(l)];
    for (int64_t v = 0; v < vocab_; ++v) {
      if (take[size_t(l)]) w_->value.set(v * labels_ + l, w[size_t(l)][size_t(v)]);
      nonzero += w_->value.at(v * labels_ + l) != 0;
    }
    if (take[size_t(l)]) b_->value.set(l, b[size_t(l)]);
    const SolverReport& r = reports[size_t(l)];
    sweeps = std::max(sweeps, r.sweeps);
    gap = std::max(gap, r.relative_gap());
    unconverged += !r.converged;
  }
  char note[400];
  const std::string kept =
      per_label_ ? ", " + std::to_string(taken) + " labels keep it (least dev loss so far)" : "";
  std::snprintf(
      note, sizeof note,
      "%s%s: %lld non-zero weights (%.1f per label), up to %lld sweeps, largest relative "
      "duality gap %.2g (tolerance %.2g)%s, solver %.2f CPU s",
      describe_point(epoch).c_str(), kept.c_str(), (long long)nonzero,
      double(nonzero) / double(labels_), (long long)sweeps, gap, solver_.tolerance,
      unconverged ? (", " + std::to_string(unconverged) + " labels NOT converged").c_str() : "",
      cpu_s);
  return note;
}

}  // namespace memgrad::text
