// Bootstrap over samples (notes) of multi-label metrics: macro AUC-ROC, micro AUC-ROC and P@k,
// for one model, the mean over a group of models (one model's seeds), and the paired difference
// between two groups on the same resamples (`memgrad metrics bootstrap` on per-label score
// files). Plain C++, beside tasks/metrics.hpp whose definitions it follows.
//
// A resample draws n samples with replacement exactly as metrics::percentile_bootstrap draws
// them (mt19937_64(seed), index = draw % n, in order), so every group and metric sees the same
// resamples. On a resample each metric is the one of evaluate_multilabel on the drawn rows:
//   macro AUC  unweighted mean over the labels that have a positive and a negative among the
//              drawn rows (a label without both is left out of that resample's mean, as
//              evaluate_multilabel leaves it out of the data's); undefined when no label has both;
//   micro AUC  AUC of all drawn (sample, label) pairs;
//   P@k        mean over the drawn rows of |top-k ∩ gold| / k (top_k's order for ties).
// A resample where a metric is undefined for any model is skipped and counted.
//
// The rows drawn are not copied: a sample drawn c times counts with weight c, and every label's
// order by score (and the pairs' for micro AUC) is sorted once, so a resample costs O(n L) per
// model, not O(n L log n). The tests check each resample's value against evaluate_multilabel on
// the drawn rows.
#pragma once
#include <cstddef>
#include <optional>
#include <vector>

#include "tasks/metrics.hpp"

namespace memgrad::metrics {

enum class MultiLabelMetric { auc_macro, auc_micro, p_at_k };

// One model's scores on the samples, prepared for weighted evaluation.
class WeightedMultiLabel {
 public:
  // Validates as evaluate_multilabel does (std::invalid_argument) and sorts once; k >= 1.
  WeightedMultiLabel(const LabelMatrix& labels, const ScoreMatrix& scores, int k);
  // The metric with sample i counted weight[i] times (whole, non-negative numbers); nullopt
  // when undefined.
  std::optional<double> value(MultiLabelMetric metric, const std::vector<double>& weight) const;
  std::size_t samples() const { return labels_.size(); }

 private:
  // A column's (or the flattened pairs') order by score, ascending, in tie groups.
  struct Ranked {
    std::vector<std::size_t> order;      // item indices by score
    std::vector<std::size_t> group_end;  // end of each tie group in `order`
  };
  static Ranked rank(const std::vector<double>& scores);
  // Weighted Mann-Whitney AUC of `ranked` items whose labels and weights are given by item.
  template <class Label, class Weight>
  static std::optional<double> auc(const Ranked& ranked, Label label, Weight weight);

  LabelMatrix labels_;
  std::vector<Ranked> columns_;  // per label
  Ranked pairs_;                 // item i * L + l
  std::vector<double> hits_;     // per sample: |top-k ∩ gold| / k
};

// The percentile interval of mean_a metric - mean_b metric (b empty: of mean_a metric) over
// `resamples` resamples of the samples, every model of both groups evaluated on each resample.
// Every model must have as many samples as the first; throws std::invalid_argument otherwise,
// for an empty `a`, and as percentile_bootstrap does.
BootstrapInterval multilabel_bootstrap_interval(const std::vector<const WeightedMultiLabel*>& a,
                                                const std::vector<const WeightedMultiLabel*>& b,
                                                MultiLabelMetric metric, int resamples = 1000,
                                                std::uint64_t seed = 1, double level = 0.95);

}  // namespace memgrad::metrics
