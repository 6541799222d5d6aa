// Float64 finite-difference gradient checks of a registered model: every parameter, each variant
// of its check_configs, at tiny dimensions over its multi-step check batch.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/gradcheck.hpp"
#include "models/model.hpp"

namespace memgrad {

// The options of every model check: central differences with eps = 1e-5 and the per-tensor
// relative bound (model_check.cpp says why these values).
GradCheckOptions model_check_options();

std::vector<GradCheckResult> check_model_gradients(const ModelInfo& model,
                                                   bool keep_values = false);

// Each of a model's check variants, made as the gradient checks make them: its label (e.g.
// "dmnc-early/cache"), the model in float64 and its tiny multi-step batch. A check config's key
// "admissions" (default 1, not a model setting) makes the variant's loss that of the batch run
// that many times in a row on one tape, each forward continuing the last one's graph
// (models/unroll.hpp): the check then covers the gradient through a model's carried state.
struct CheckVariant {
  std::string label;
  std::unique_ptr<Model> model;
  Batch batch;
  int64_t admissions = 1;
  // The variant's loss on `tape`, from a fresh carried state (Model::reset_state), so that every
  // evaluation of a gradient check computes the same function.
  Var loss(Tape& tape);
};
std::vector<CheckVariant> check_variants(const ModelInfo& model);

// The float32 path (the training dtype, the SIMD kernels) against float64 on one check variant:
// its parameters rounded to float32 in both models (the variant's own in place), so that both
// compute from the same values, the same batch, one forward and backward each on a plain tape.
// It passes when the losses differ by at most kFloat32LossRtol of the float64 loss and each
// parameter's gradients by at most kFloat32GradRtol of its float64 gradient's norm
// (model_check.cpp says why these values).
inline constexpr double kFloat32LossRtol = 1e-6;
inline constexpr double kFloat32GradRtol = 1e-3;
struct Float32Comparison {
  double loss_rel_err = 0;  // |L32 - L64| / |L64|
  std::vector<std::string> params;
  std::vector<double> grad_rel_err;  // per parameter: ||g32 - g64|| / ||g64|| (Euclidean norms)
  bool passed = false;
};
// `tamper`, when given, is applied to the float32 model's parameters after its backward (tests
// plant an error in a gradient with it).
Float32Comparison compare_float32(const ModelInfo& model, CheckVariant& variant,
                                  const std::function<void(ParameterSet&)>& tamper = {});

}  // namespace memgrad
