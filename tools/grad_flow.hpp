// Gradient flow through one sample's steps, for `memgrad inspect --grad-flow`: the norm of the
// loss's gradient with respect to every traced tensor at every step (a recurrent model's state
// and memory: how far back the gradient reaches, whether it vanishes or explodes), and with
// respect to each parameter.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/tape.hpp"
#include "tools/trace_view.hpp"

namespace memgrad::cli {

struct GradFlow {
  struct Series {
    std::string name;                         // the trace series ("enc/state/memory")
    std::vector<int64_t> steps;               // as in the trace (-1: no step)
    std::vector<std::optional<double>> grad;  // |dL/d value| per step; none: no gradient reached
    std::vector<double> value;                // |value| per step
  };
  std::vector<Series> series;  // the series recorded from tape nodes, in trace order
  struct Param {
    std::string name;
    double value = 0, grad = 0;  // |parameter|, |dL/d parameter| (0 when no gradient reached)
  };
  std::vector<Param> params;  // in the order the pass first used them
};

// Reads the gradients of `tape` after backward(loss): for every series whose steps name tape
// nodes (Trace::record of a Var), and for every parameter leaf.
GradFlow grad_flow(const Tape& tape, const std::vector<TraceSeries>& series);

// {"series": [{"name", "steps", "grad_norm" (null where none), "value_norm"}],
//  "parameters": [{"name", "norm", "grad_norm"}]}
nlohmann::json grad_flow_json(const GradFlow& flow);

// A table: per series one row of gradient norms over the steps; then per parameter its norms.
std::string grad_flow_text(const GradFlow& flow);

// HTML: log-scale charts of the gradient norm over the steps, one line per series of two or more
// steps: first the recurrent state (series under a "state/" part, or named h, c or memory), then
// the rest (gates, weightings); then a table of the parameters' norms and gradient norms.
std::string grad_flow_html(const GradFlow& flow);

}  // namespace memgrad::cli
