// Every registered model has gradient checks, and they pass: float64 central differences on every
// parameter of each variant at tiny dimensions over a multi-step batch.
#include <doctest/doctest.h>

#include "models/model_check.hpp"

using namespace memgrad;

TEST_CASE("every registered model declares gradient checks") {
  for (const ModelInfo& m : all_models()) {
    INFO("model ", m.name);
    CHECK(!m.check_configs.empty());
    CHECK(static_cast<bool>(m.check_batch));
    CHECK(m.default_config.is_object());
  }
}

TEST_CASE("every registered model passes its float64 parameter gradient checks") {
  for (const ModelInfo& m : all_models()) {
    for (const GradCheckResult& r : check_model_gradients(m)) {
      INFO(r.name, ": max abs err ", r.max_abs_err, ", max rel err ", r.max_rel_err, " ",
           r.message);
      CHECK(r.passed);
      MESSAGE(r.name, ": max rel err ", r.max_rel_err);
    }
  }
}
