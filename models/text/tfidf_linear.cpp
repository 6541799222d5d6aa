// The tf-idf linear baselines' shared model (see tfidf_linear.hpp).
#include "models/text/tfidf_linear.hpp"

#include <algorithm>
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
  d.update(own);
  return d;
}

TfIdfLinear::TfIdfLinear(std::string name, nlohmann::json defaults, const nlohmann::json& config,
                         DType dtype, uint64_t seed)
    : Model(dtype), name_(std::move(name)), notes_(0, 0) {
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

std::string TfIdfLinear::on_epoch_end(int64_t epoch, double) {
  MG_CHECK(data_, name_, ": epoch ", epoch, " ended before the model saw the training notes");
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
  parallel_for_each(labels_, [&](int64_t l) {
    reports[size_t(l)] = solve_label(epoch, l, w[size_t(l)], b[size_t(l)]);
  });
  const double cpu_s = double(std::clock() - cpu0) / CLOCKS_PER_SEC;
  int64_t nonzero = 0, sweeps = 0, unconverged = 0;
  double gap = 0;
  for (int64_t l = 0; l < labels_; ++l) {
    for (int64_t v = 0; v < vocab_; ++v) {
      w_->value.set(v * labels_ + l, w[size_t(l)][size_t(v)]);
      nonzero += w[size_t(l)][size_t(v)] != 0;
    }
    b_->value.set(l, b[size_t(l)]);
    const SolverReport& r = reports[size_t(l)];
    sweeps = std::max(sweeps, r.sweeps);
    gap = std::max(gap, r.relative_gap());
    unconverged += !r.converged;
  }
  char note[320];
  std::snprintf(
      note, sizeof note,
      "%s: %lld non-zero weights (%.1f per label), up to %lld sweeps, largest relative "
      "duality gap %.2g (tolerance %.2g)%s, solver %.2f CPU s",
      describe_point(epoch).c_str(), (long long)nonzero, double(nonzero) / double(labels_),
      (long long)sweeps, gap, solver_.tolerance,
      unconverged ? (", " + std::to_string(unconverged) + " labels NOT converged").c_str() : "",
      cpu_s);
  return note;
}

}  // namespace memgrad::text
