// Backpropagation through a patient's admissions (models/unroll.hpp): the models that carry state
// between batches (persistent DMNC, DeepCare) continue the previous forward's graph when asked, so
// the unrolled loss's gradient includes the earlier admission's influence; without it (the carried
// state as data) the same loss fails its finite-difference check, so the unrolled check variants
// of the registry can tell the two apart.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/error.hpp"
#include "models/model_check.hpp"
#include "models/unroll.hpp"
#include "ops/ops.hpp"

namespace unroll_tests {

using namespace memgrad;

namespace {

const ModelInfo& info(const std::string& name) {
  return *std::find_if(all_models().begin(), all_models().end(),
                       [&](const ModelInfo& m) { return m.name == name; });
}

// The model's check variant whose label ends with `variant`.
CheckVariant variant(const std::string& model, const std::string& name) {
  for (CheckVariant& v : check_variants(info(model)))
    if (v.label == model + "/" + name) return std::move(v);
  FAIL("no variant ", model, "/", name);
  throw;  // unreachable: FAIL throws
}

// Two admissions of the variant's batch whose second forward takes the carried state as data.
Var detached_two_admissions(CheckVariant& v, Tape& tape) {
  v.model->reset_state();
  const Var first = v.model->forward(tape, v.batch, ForwardOptions{}).loss;
  const Var second = v.model->forward(tape, v.batch, ForwardOptions{}).loss;
  return scale(add(first, second), 0.5);
}

const char* const kUnrolled[][2] = {{"dmnc-late", "set-persistent-unrolled"},
                                    {"dmnc-early", "set-cache-persistent-unrolled"},
                                    {"deepcare", "unrolled"}};

}  // namespace

TEST_CASE(
    "unrolled admissions: the gradient crosses them, and the check fails it when it does not") {
  for (const auto& [model, name] : kUnrolled) {
    CheckVariant v = variant(model, name);
    INFO(v.label);
    REQUIRE(v.admissions == 2);
    REQUIRE(v.model->carries_state());
    const GradCheckOptions opts = model_check_options();
    const GradCheckResult unrolled = check_parameter_gradients(
        v.label, v.model->params(), [&](Tape& tape) { return v.loss(tape); }, opts);
    INFO("unrolled: ", unrolled.message);
    CHECK(unrolled.passed);
    const GradCheckResult detached = check_parameter_gradients(
        v.label, v.model->params(), [&](Tape& tape) { return detached_two_admissions(v, tape); },
        opts);
    INFO("detached: ", detached.message);
    CHECK_FALSE(detached.passed);
  }
}

TEST_CASE(
    "unrolled admissions: the loss is the mean of the admissions' losses, as applied one by one") {
  // Values only: the unrolled forward computes what the same admissions one tape each compute.
  for (const auto& [model, name] : kUnrolled) {
    CheckVariant v = variant(model, name);
    INFO(v.label);
    Tape tape;
    const double unrolled = v.loss(tape).value().at(0);
    v.model->reset_state();
    double sum = 0;
    for (int k = 0; k < 2; ++k) {
      Tape own;
      sum += v.model->forward(own, v.batch, ForwardOptions{}).loss.value().at(0);
    }
    CHECK(unrolled == doctest::Approx(sum / 2).epsilon(1e-12));
  }
}

TEST_CASE("unrolled admissions: misuse is an error that says what is wrong") {
  // A model that carries nothing between batches has nothing to backpropagate through.
  CheckVariant plain = variant("dmnc-late", "set");
  REQUIRE_FALSE(plain.model->carries_state());
  const std::vector<const Batch*> two(2, &plain.batch);
  Tape tape;
  CHECK_THROWS_WITH_AS(unrolled_loss(*plain.model, tape, two),
                       doctest::Contains("carries no state from one batch to the next"), Error);
  CHECK_THROWS_WITH_AS(unrolled_loss(*plain.model, tape, {}),
                       doctest::Contains("at least one batch"), Error);
  // Continuing a graph that is on another tape.
  for (const auto& [model, name] : kUnrolled) {
    CheckVariant v = variant(model, name);
    INFO(v.label);
    v.model->reset_state();
    Tape first, second;
    v.model->forward(first, v.batch, ForwardOptions{});
    ForwardOptions continues;
    continues.continues_graph = true;
    CHECK_THROWS_WITH_AS(v.model->forward(second, v.batch, continues),
                         doctest::Contains("previous forward on the same tape"), Error);
  }
}

}  // namespace unroll_tests
