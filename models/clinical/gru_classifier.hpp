// The GRU baseline of the EBmRNN paper's Table 1 for in-hospital mortality: a stacked GRU over the
// stay's hourly inputs (tasks/physionet2012.hpp, field x [B, T, F]) whose last hidden state gives
// one logit, as the MIMIC-III benchmark's recurrent baselines (Harutyunyan et al. 2019) do:
//     h^1_t = GRU_1(x_t, h^1_{t-1}),  h^l_t = GRU_l(dropout(h^{l-1}_t), h^l_{t-1})  (l > 1)
//     logit = w . dropout(h^L_T) + b,  loss = mean_b bce(logit_b, y_b)
// GRU cells: rnn_cells.hpp (Cho et al. 2014). Defaults: 2 layers of 16 units, dropout 0.3 between
// the layers and on the last state (the benchmark's recommended in-hospital-mortality LSTM:
// 16 units, depth 2, dropout 0.3; the GRU the same). Each layer runs over the whole sequence
// before the next (its input projection is one GEMM over all steps).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/layers/linear.hpp"
#include "models/layers/rnn_cells.hpp"
#include "models/model.hpp"

namespace memgrad {

class GruClassifier : public Model {
 public:
  GruClassifier(const nlohmann::json& config, DType dtype, uint64_t seed);
  std::string name() const override { return "gru"; }
  nlohmann::json config() const override { return config_; }
  ForwardResult forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) override;
  bool supports_shards() const override { return true; }

 private:
  nlohmann::json config_;
  int64_t inputs_ = 0, steps_ = 0;
  double dropout_ = 0;
  std::vector<GruCell> layers_;
  layers::Linear out_;
};

}  // namespace memgrad
