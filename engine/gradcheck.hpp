// Finite-difference gradient checking, and the registry of gradient-check cases.
//
// A check builds a graph from float64 inputs, scalarises its output with a fixed random projection
// R (loss = sum(out * R), so every output element matters with its own weight), runs backward for
// the analytic gradient, and compares it with central differences
//     (f(x + eps e_j) - f(x - eps e_j)) / (2 eps)
// for every element j of every differentiable input. An element passes when
//     |analytic - numeric| <= atol + rtol * |numeric|.
// The reported relative error is |analytic - numeric| / max(|analytic|, |numeric|, 1e-3): relative
// for gradients of ordinary size, absolute (scaled by 1e-3) for tiny ones whose relative error is
// only rounding noise.
// Parameter checks (check_parameter_gradients, the model checks) add a bound per parameter tensor,
// since a whole tensor's gradient can be small (an attention query's, ~5e-7 at check sizes): there
// atol alone lets an error of several percent pass. A tensor passes when
//     max_j |a_j - n_j| <= tensor_rtol * max(scale, tensor_floor),  scale = max_j max(|a_j|, |n_j|)
// over its checked elements, and its reported relative error is the left side over
// max(scale, tensor_floor): an error of a few percent in one tensor shows at its own scale.
// Stochastic ops replay their noise: every rebuild uses a tape with the same seed and step.
#pragma once
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "engine/parameter.hpp"
#include "engine/tape.hpp"

namespace memgrad {

struct GradInput {
  Tensor value;                // float64
  bool differentiable = true;  // false for indices, masks, targets
};

using GraphBuilder = std::function<Var(Tape&, std::span<const Var>)>;

struct GradCheckOptions {
  double eps = 1e-6;
  double atol = 1e-7;
  double rtol = 1e-6;
  // check_parameter_gradients only: the bound per parameter tensor (see the top of this file).
  double tensor_rtol = 1e-4;
  double tensor_floor = 1e-8;
  bool keep_values = false;  // keep analytic and numeric gradients for --verbose
  uint64_t seed = 1;
};

struct InputReport {
  double max_abs_err = 0;
  double max_rel_err = 0;
  double scale = 0;  // largest |analytic| or |numeric| over the checked elements
  std::string name;  // the parameter's name (parameter checks)
  bool passed = true;
  std::vector<double> analytic, numeric;  // only with keep_values
};

struct GradCheckResult {
  std::string name;
  double max_abs_err = 0;
  double max_rel_err = 0;
  bool passed = true;
  std::string
      message;  // why it failed beyond tolerance: non-finite output, broken invariant, error
  std::vector<InputReport> inputs;  // one per input (non-differentiable ones stay empty)
};

// Checks the gradient of build(inputs) with respect to every differentiable input.
GradCheckResult check_gradients(const std::string& name, const std::vector<GradInput>& inputs,
                                const GraphBuilder& build, const GradCheckOptions& opts = {});

// Checks the gradients of a loss with respect to every parameter of `params` (float64), each
// element against atol and rtol and each parameter tensor against tensor_rtol; the message names
// the parameters that fail. `loss` builds a scalar from the parameters on the given tape. With
// max_elements > 0, at most that many elements per parameter (spread evenly) are checked
// numerically; with `only` non-empty, only the parameter of that name (the others' reports stay
// empty).
GradCheckResult check_parameter_gradients(const std::string& name, ParameterSet& params,
                                          const std::function<Var(Tape&)>& loss,
                                          const GradCheckOptions& opts = {},
                                          int64_t max_elements = 0, const std::string& only = "");

// ---- registry of op cases
struct GradCase {
  std::string op;    // the OpDef name this case covers
  std::string name;  // shown in reports, e.g. "add/broadcast-row"
  std::function<std::vector<GradInput>(Rng&)> make_inputs;  // float64 values
  GraphBuilder build;
  GradCheckOptions options{};
  std::string note;  // e.g. "inputs kept away from 0, where relu has no derivative"
};

void register_grad_case(GradCase c);
const std::vector<GradCase>& all_grad_cases();
GradCheckResult run_grad_case(const GradCase& c, bool keep_values = false);

// Names of registered ops (non-leaf OpDefs) that no case covers: must be empty.
std::vector<std::string> ops_without_grad_case();

#define MG_CONCAT_INNER(a, b) a##b
#define MG_CONCAT(a, b) MG_CONCAT_INNER(a, b)
// MG_GRAD_CASE({...GradCase fields...}); at namespace scope in the op's own file.
#define MG_GRAD_CASE(...)                                           \
  static const bool MG_CONCAT(kGradCase_, __LINE__) = [] {          \
    ::memgrad::register_grad_case(::memgrad::GradCase __VA_ARGS__); \
    return true;                                                    \
  }()

// Random float64 tensor, uniform in [lo, hi): a helper for case generators.
Tensor random_tensor(Rng& rng, const Shape& shape, double lo = -1.0, double hi = 1.0);

}  // namespace memgrad
