#include "tasks/multilabel_bootstrap.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace memgrad::metrics {

WeightedMultiLabel::Ranked WeightedMultiLabel::rank(const std::vector<double>& scores) {
  Ranked r;
  r.order.resize(scores.size());
  std::iota(r.order.begin(), r.order.end(), std::size_t{0});
  std::sort(r.order.begin(), r.order.end(),
            [&](std::size_t a, std::size_t b) { return scores[a] < scores[b]; });
  for (std::size_t i = 1; i <= r.order.size(); ++i)
    if (i == r.order.size() || scores[r.order[i]] != scores[r.order[i - 1]])
      r.group_end.push_back(i);
  return r;
}

template <class Label, class Weight>
std::optional<double> WeightedMultiLabel::auc(const Ranked& ranked, Label label, Weight weight) {
  // Each positive scores 1 per negative strictly below it and 1/2 per negative tied with it.
  double wins = 0, negatives_below = 0, positives = 0;
  std::size_t begin = 0;
  for (const std::size_t end : ranked.group_end) {
    double pos = 0, neg = 0;
    for (std::size_t i = begin; i < end; ++i) {
      const std::size_t item = ranked.order[i];
      (label(item) == 1 ? pos : neg) += weight(item);
    }
    wins += pos * (negatives_below + 0.5 * neg);
    negatives_below += neg;
    positives += pos;
    begin = end;
  }
  if (positives == 0 || negatives_below == 0) return std::nullopt;
  return wins / (positives * negatives_below);
}

WeightedMultiLabel::WeightedMultiLabel(const LabelMatrix& labels, const ScoreMatrix& scores, int k)
    : labels_(labels) {
  if (k < 1) throw std::invalid_argument("metrics: k must be >= 1");
  // evaluate_multilabel validates the shapes, labels and scores; P@k is its per-sample hits.
  evaluate_multilabel(labels, scores, 0.5, {k});
  const std::size_t n = labels.size(), L = labels.front().size();
  std::vector<double> column(n), flat(n * L);
  for (std::size_t l = 0; l < L; ++l) {
    for (std::size_t i = 0; i < n; ++i) column[i] = scores[i][l];
    columns_.push_back(rank(column));
  }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t l = 0; l < L; ++l) flat[i * L + l] = scores[i][l];
  pairs_ = rank(flat);
  for (std::size_t i = 0; i < n; ++i) {
    double hit = 0;
    for (const int l : top_k(scores[i], k)) hit += labels[i][std::size_t(l)];
    hits_.push_back(hit / double(k));
  }
}

std::optional<double> WeightedMultiLabel::value(MultiLabelMetric metric,
                                                const std::vector<double>& weight) const {
  if (weight.size() != labels_.size())
    throw std::invalid_argument("metrics: weights for " + std::to_string(weight.size()) +
                                " samples, the scores have " + std::to_string(labels_.size()));
  const std::size_t L = columns_.size();
  switch (metric) {
    case MultiLabelMetric::auc_macro: {
      double sum = 0;
      std::size_t used = 0;
      for (std::size_t l = 0; l < L; ++l) {
        const std::optional<double> v = auc(
            columns_[l], [&](std::size_t i) { return labels_[i][l]; },
            [&](std::size_t i) { return weight[i]; });
        if (v) sum += *v, ++used;
      }
      if (used == 0) return std::nullopt;
      return sum / double(used);
    }
    case MultiLabelMetric::auc_micro:
      return auc(
          pairs_, [&](std::size_t p) { return labels_[p / L][p % L]; },
          [&](std::size_t p) { return weight[p / L]; });
    case MultiLabelMetric::p_at_k: {
      double sum = 0, count = 0;
      for (std::size_t i = 0; i < hits_.size(); ++i)
        sum += weight[i] * hits_[i], count += weight[i];
      if (count == 0) return std::nullopt;
      return sum / count;
    }
  }
  return std::nullopt;
}

BootstrapInterval multilabel_bootstrap_interval(const std::vector<const WeightedMultiLabel*>& a,
                                                const std::vector<const WeightedMultiLabel*>& b,
                                                MultiLabelMetric metric, int resamples,
                                                std::uint64_t seed, double level) {
  if (a.empty()) throw std::invalid_argument("metrics: bootstrap: no model");
  const std::size_t n = a.front()->samples();
  for (const auto* group : {&a, &b})
    for (const WeightedMultiLabel* m : *group)
      if (m->samples() != n)
        throw std::invalid_argument("metrics: bootstrap: models scored on " + std::to_string(n) +
                                    " and " + std::to_string(m->samples()) + " samples");
  std::vector<double> weight(n);
  auto mean = [&](const std::vector<const WeightedMultiLabel*>& group) -> std::optional<double> {
    double sum = 0;
    for (const WeightedMultiLabel* m : group) {
      const std::optional<double> v = m->value(metric, weight);
      if (!v) return std::nullopt;
      sum += *v;
    }
    return sum / double(group.size());
  };
  return percentile_bootstrap(
      n, resamples, seed, level,
      [&](const std::vector<std::size_t>& indices) -> std::optional<double> {
        std::fill(weight.begin(), weight.end(), 0.0);
        for (const std::size_t i : indices) weight[i] += 1;
        const std::optional<double> x = mean(a);
        if (!x || b.empty()) return x;
        const std::optional<double> y = mean(b);
        if (!y) return std::nullopt;
        return *x - *y;
      });
}

}  // namespace memgrad::metrics
