// Every registered model has gradient checks, and they pass: float64 central differences on every
// parameter of each variant at tiny dimensions over a multi-step batch. The training tape's modes
// (in-place parameter gradients, moved gradients) give every model the same gradients.
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

TEST_CASE("every registered model: the training tape's modes give the same gradients") {
  // Tape::set_param_grads_in_place and set_move_grads change where gradients are summed, not the
  // sums: Parameter::grad must come out bit for bit the same, two steps in a row (slots reused).
  for (const ModelInfo& m : all_models()) {
    for (CheckVariant& v : check_variants(m)) {
      INFO(v.label);
      ParameterSet& params = v.model->params();
      std::vector<std::vector<double>> grads[2];
      for (int modes = 0; modes < 2; ++modes) {
        Tape tape;
        tape.set_param_grads_in_place(modes == 1);
        tape.set_move_grads(modes == 1);
        for (int step = 0; step < 2; ++step) {
          params.zero_grad();
          tape.reset();
          tape.backward(v.model->forward(tape, v.batch, ForwardOptions{}).loss);
        }
        for (size_t i = 0; i < params.size(); ++i)
          grads[modes].push_back(params[i].grad.to_vector());
      }
      for (size_t i = 0; i < params.size(); ++i) {
        INFO(params[i].name);
        CHECK(grads[1][i] == grads[0][i]);
      }
    }
  }
}
