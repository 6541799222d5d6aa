// Float64 finite-difference gradient checks of a registered model: every parameter, each variant
// of its check_configs, at tiny dimensions over its multi-step check batch.
#pragma once
#include <vector>

#include "engine/gradcheck.hpp"
#include "models/model.hpp"

namespace memgrad {

std::vector<GradCheckResult> check_model_gradients(const ModelInfo& model,
                                                   bool keep_values = false);

}  // namespace memgrad
