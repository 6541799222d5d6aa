// Float64 finite-difference gradient checks of a registered model: every parameter, each variant
// of its check_configs, at tiny dimensions over its multi-step check batch.
#pragma once
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
// "dmnc-early/cache"), the model in float64 and its tiny multi-step batch.
struct CheckVariant {
  std::string label;
  std::unique_ptr<Model> model;
  Batch batch;
};
std::vector<CheckVariant> check_variants(const ModelInfo& model);

}  // namespace memgrad
