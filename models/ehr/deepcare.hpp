// DeepCare (Pham, Tran, Phung & Venkatesh 2016/2017), the disease-progression baseline of the DMNC
// paper's Table 5, as ../shared/design/wave2-notes/P3-dmnc-ehr.md section 2 writes it: an LSTM over
// a patient's admissions (one step per admission) whose forget gate decays with the time since the
// previous admission. Registered as "deepcare"; task mimic-progression (rows are patients).
//
// Per admission a (B rows, E embedding, H hidden, V labels):
//   x_a = mean of E_dx[diagnosis tokens]   p_a = mean of E_int[procedure tokens] (0 when none)
//   [i; f; o] = sigmoid([x_a; p_a; h_{a-1}] W_g + b_g)          (W_x, P, U of the notes in one W_g)
//   f_a = g(Delta_a) * f,  g(Delta) = 1 / log(e + Delta_days)   (DeepCare's logarithmic decay)
//   c_a = f_a * c_{a-1} + i * tanh([x_a; h_{a-1}] W_c + b_c)    (the candidate sees no p_a)
//   h_a = o * tanh(c_a)
//   logits of admission a+1's diagnoses = W_y mean_{a' <= a} h_{a'} + b_y
// (DeepCare's multiscale pooling simplified to the mean of the history's states, as the notes
// choose), loss bce_with_logits over labels [B, V], rows masked by labels_mask [B] when present.
//
// The admissions of a patient arrive one batch at a time (the task's lock-step rows), so h, c and
// the pooled sum are CARRIED from one forward to the next per row. By default as values: gradients
// are truncated at admission boundaries, as DMNC's persistent memory is trained by default
// (models/dnc/dmnc.hpp). A forward with ForwardOptions::continues_graph starts from the previous
// forward's h, c and sum as recorded on the same tape instead (`memgrad train --unroll K`,
// models/unroll.hpp), so the loss backpropagates through K admissions, as DeepCare itself does
// through all of a patient's admissions. A
// row is a new patient when the batch's field patient_start [B] marks it, and every row is when
// the batch has no such field (each forward then stands alone: the gradient checks). A row with no
// diagnosis at this step (a patient without an admission here) keeps its state exactly.
// Config "carry_state" false starts every admission from zero (the ablation); "time_decay" false
// sets g = 1. Embeddings are trained end to end (DeepCare pre-trained them).
#pragma once
#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/layers/linear.hpp"
#include "models/model.hpp"

namespace memgrad {

class DeepCare : public Model {
 public:
  DeepCare(const nlohmann::json& config, DType dtype, uint64_t seed);
  std::string name() const override { return name_; }
  nlohmann::json config() const override { return config_; }
  ForwardResult forward(Tape& tape, const Batch& batch, const ForwardOptions& opts) override;
  bool carries_state() const override { return carry_; }
  void reset_state() override { valid_ = false; }

 private:
  // The carried state of every row: h, c and the sum of the history's h [B, H], and the number of
  // admissions summed per row. Two buffers: the current one is the forward's tape leaves.
  struct Carried {
    std::array<Tensor, 3> state;  // h, c, pooled sum
    std::vector<double> count;
  };
  Var masked_mean(Tape& tape, const layers::Embedding& table, const Tensor& ids,
                  const Tensor& mask) const;

  std::string name_ = "deepcare";
  nlohmann::json config_;
  int64_t hidden_ = 0;
  bool carry_ = true, decay_ = true;
  layers::Embedding dx_, proc_;
  layers::Linear gates_, candidate_, out_;
  std::array<Carried, 2> carried_;
  int current_ = 0;
  bool valid_ = false;  // false: every row starts from zero
  // The last forward's final h, c and pooled sum as Vars of its tape (continues_graph reads them).
  std::array<Var, 3> graph_state_;
};

}  // namespace memgrad
