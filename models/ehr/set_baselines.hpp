// The multi-label baselines of the DMNC paper's drug prescription table (Table 3, section 4.2),
// on the bag of an admission's codes: x = [counts of its diagnosis tokens ; counts of its
// procedure tokens] (views x1, x2 of the two-view batch; padding, token 0, is not counted).
//
// Binary relevance ("binary-relevance"): one logistic regression per label,
//     z = b + x W,   loss = mean over (sample, label) of bce(z, y) + (l2 / 2) |W|^2,
// W [V1 + V2, L] (as two lookup tables, W1 [V1, L] and W2 [V2, L]: x W = sum of the rows of the
// codes present, one gather instead of a dense bag). Weights start at zero.
//
// Classifier chains ("classifier-chains", Read et al. 2009): labels in a fixed random order pi
// (config "chain_seed"); classifier k sees x and the labels before it in the chain,
//     z_k = b_k + x W_{:,k} + sum_{j before k} y_j C_{jk},
// as one product z = b + x W + Y (C * P) with P[j, k] = 1 when j comes before k in pi. Training
// feeds the true labels Y (the chain's teacher forcing); evaluation (ForwardOptions::training
// false) runs the chain in order, each y_j its own prediction 1[z_j > 0] (the original
// algorithm), and scores every label by its z_k. The L2 penalty covers W and C.
//
// Config "views": "both" (default), "dx" (x1 only) or "proc" (x2 only), the single-view rows of
// Table 3. Predictions: logits [B, L]; the task's labels field [B, L] is the target.
#pragma once
#include <array>
#include <nlohmann/json.hpp>
#include <string>

#include "models/model.hpp"

namespace memgrad {

class BagOfCodes : public Model {
 public:
  BagOfCodes(bool chain, const nlohmann::json& config, DType dtype, uint64_t seed);
  std::string name() const override { return name_; }
  nlohmann::json config() const override { return config_; }
  ForwardResult forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) override;
  bool supports_shards() const override { return true; }

 private:
  bool chain_;
  std::string name_;  // forward() passes it by reference: a copy would allocate every step
  nlohmann::json config_;
  int64_t labels_ = 0;
  double l2_ = 0;
  std::array<bool, 2> use_ = {true, true};  // config "views" (dnc::views_read)
  Parameter *w_[2] = {nullptr, nullptr}, *b_ = nullptr, *c_ = nullptr;
  Tensor before_;               // P [L, L], chains only
  std::vector<int64_t> order_;  // pi, chains only
};

}  // namespace memgrad
