#include "engine/gradcheck.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

namespace memgrad {
namespace {

constexpr double kRelFloor = 1e-3;

// sum(out * projection), computed directly (not with ops) so the checker trusts no op.
double project(const Tensor& out, const Tensor& projection) {
  const double* o = out.data<double>();
  const double* r = projection.data<double>();
  double s = 0;
  for (int64_t i = 0; i < out.numel(); ++i) s += o[i] * r[i];
  return s;
}

bool all_finite(const Tensor& t) {
  const double* p = t.data<double>();
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!std::isfinite(p[i])) return false;
  return true;
}

void compare(double analytic, double numeric, const GradCheckOptions& opts, InputReport& rep) {
  const double abs_err = std::fabs(analytic - numeric);
  const double rel_err = abs_err / std::max({std::fabs(analytic), std::fabs(numeric), kRelFloor});
  rep.max_abs_err = std::max(rep.max_abs_err, abs_err);
  rep.max_rel_err = std::max(rep.max_rel_err, rel_err);
  if (!(abs_err <= opts.atol + opts.rtol * std::fabs(numeric))) rep.passed = false;
}

// The bound per parameter tensor: its largest error against its largest gradient.
void check_tensor(const std::string& param, const GradCheckOptions& opts, InputReport& rep,
                  std::string& message) {
  rep.max_rel_err = rep.max_abs_err / std::max(rep.scale, opts.tensor_floor);
  if (rep.max_rel_err <= opts.tensor_rtol) return;
  rep.passed = false;
  std::ostringstream out;
  out << (message.empty() ? "" : "; ") << "parameter '" << param << "': max |analytic - numeric| "
      << rep.max_abs_err << " is " << rep.max_rel_err << " of its largest gradient " << rep.scale
      << " (bound " << opts.tensor_rtol << ")";
  message += out.str();
}

void summarise(GradCheckResult& r) {
  for (const InputReport& in : r.inputs) {
    r.max_abs_err = std::max(r.max_abs_err, in.max_abs_err);
    r.max_rel_err = std::max(r.max_rel_err, in.max_rel_err);
    if (!in.passed) r.passed = false;
  }
}

// Builds the graph on a fresh step of `tape` (same seed, step 0: identical noise every time).
Var rebuild(Tape& tape, std::vector<Tensor>& values, const std::vector<GradInput>& inputs,
            const GraphBuilder& build, std::vector<Var>& vars) {
  tape.reset();
  tape.set_step(0);
  vars.clear();
  for (size_t i = 0; i < inputs.size(); ++i)
    vars.push_back(tape.input(values[i], inputs[i].differentiable));
  Var out = build(tape, vars);
  MG_CHECK(out.dtype() == DType::f64, "gradient check needs a float64 output");
  return out;
}

}  // namespace

Tensor random_tensor(Rng& rng, const Shape& shape, double lo, double hi) {
  Tensor t = Tensor::empty(shape, DType::f64);
  double* p = t.data<double>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = rng.uniform(lo, hi);
  return t;
}

GradCheckResult check_gradients(const std::string& name, const std::vector<GradInput>& inputs,
                                const GraphBuilder& build, const GradCheckOptions& opts) {
  GradCheckResult result;
  result.name = name;
  result.inputs.resize(inputs.size());
  try {
    std::vector<Tensor> values;
    for (const GradInput& in : inputs) {
      MG_CHECK(in.value.dtype() == DType::f64, name, ": gradient-check inputs must be float64");
      values.push_back(in.value.clone());
    }
    Tape tape(opts.seed);
    std::vector<Var> vars;
    Var out = rebuild(tape, values, inputs, build, vars);
    if (!all_finite(out.value())) {
      result.passed = false;
      result.message = "non-finite output";
      return result;
    }
    Rng proj_rng(opts.seed, 0x5eed);
    Tensor projection = random_tensor(proj_rng, out.shape(), -1.0, 1.0);

    // Analytic gradients, twice: two backward runs must agree exactly.
    std::vector<Tensor> analytic(inputs.size());
    for (int run = 0; run < 2; ++run) {
      if (run == 1) out = rebuild(tape, values, inputs, build, vars);
      tape.backward(out, projection);
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (!inputs[i].differentiable) continue;
        Tensor g = vars[i].grad();
        if (!g.defined()) g = Tensor::zeros(values[i].shape(), DType::f64);
        if (run == 0) {
          analytic[i] = g.clone();
        } else if (g.to_vector() != analytic[i].to_vector()) {
          result.passed = false;
          result.message = "two backward runs disagree";
        }
      }
    }
    // Zero upstream gradient gives zero gradients.
    out = rebuild(tape, values, inputs, build, vars);
    tape.backward(out, Tensor::zeros(out.shape(), DType::f64));
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].differentiable) continue;
      Tensor g = vars[i].grad();
      if (!g.defined()) continue;
      for (double v : g.to_vector())
        if (v != 0.0) {
          result.passed = false;
          result.message = "zero upstream gradient gave a non-zero gradient";
        }
    }

    // Central differences.
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].differentiable) continue;
      InputReport& rep = result.inputs[i];
      double* x = values[i].data<double>();
      const double* a = analytic[i].data<double>();
      for (int64_t j = 0; j < values[i].numel(); ++j) {
        const double saved = x[j];
        x[j] = saved + opts.eps;
        const double f_plus =
            project(rebuild(tape, values, inputs, build, vars).value(), projection);
        x[j] = saved - opts.eps;
        const double f_minus =
            project(rebuild(tape, values, inputs, build, vars).value(), projection);
        x[j] = saved;
        const double numeric = (f_plus - f_minus) / (2 * opts.eps);
        compare(a[j], numeric, opts, rep);
        if (opts.keep_values) {
          rep.analytic.push_back(a[j]);
          rep.numeric.push_back(numeric);
        }
      }
    }
  } catch (const Error& e) {
    result.passed = false;
    result.message = e.what();
    return result;
  }
  const bool invariants_ok = result.passed;
  summarise(result);
  result.passed = result.passed && invariants_ok;
  return result;
}

GradCheckResult check_parameter_gradients(const std::string& name, ParameterSet& params,
                                          const std::function<Var(Tape&)>& loss,
                                          const GradCheckOptions& opts, int64_t max_elements,
                                          const std::string& only) {
  GradCheckResult result;
  result.name = name;
  result.inputs.resize(params.size());
  try {
    MG_CHECK(params.dtype() == DType::f64, name, ": parameter gradient check needs float64");
    Tape tape(opts.seed);
    auto evaluate = [&]() {
      tape.reset();
      tape.set_step(0);
      Var l = loss(tape);
      MG_CHECK(l.value().numel() == 1, name, ": the loss must be a scalar, got ", l.shape());
      return l;
    };
    params.zero_grad();
    Var l = evaluate();
    if (!std::isfinite(l.value().at(0))) {
      result.passed = false;
      result.message = "non-finite loss";
      return result;
    }
    tape.backward(l);
    MG_CHECK(only.empty() || params.find(only), name, ": no parameter named '", only, "'");
    for (size_t p = 0; p < params.size(); ++p) {
      Parameter& param = params[p];
      if (!only.empty() && param.name != only) continue;
      InputReport& rep = result.inputs[p];
      rep.name = param.name;
      const Tensor analytic = param.grad.clone();
      double* x = param.value.data<double>();
      const int64_t n = param.value.numel();
      const int64_t count = max_elements > 0 ? std::min(n, max_elements) : n;
      for (int64_t c = 0; c < count; ++c) {
        const int64_t j = count == n ? c : c * n / count;
        const double saved = x[j];
        x[j] = saved + opts.eps;
        const double f_plus = evaluate().value().at(0);
        x[j] = saved - opts.eps;
        const double f_minus = evaluate().value().at(0);
        x[j] = saved;
        const double numeric = (f_plus - f_minus) / (2 * opts.eps);
        compare(analytic.at(j), numeric, opts, rep);
        rep.scale = std::max({rep.scale, std::fabs(analytic.at(j)), std::fabs(numeric)});
        if (opts.keep_values) {
          rep.analytic.push_back(analytic.at(j));
          rep.numeric.push_back(numeric);
        }
      }
      check_tensor(param.name, opts, rep, result.message);
    }
  } catch (const Error& e) {
    result.passed = false;
    result.message = e.what();
    return result;
  }
  summarise(result);
  return result;
}

namespace {
std::vector<GradCase>& case_registry() {
  static std::vector<GradCase> cases;  // filled during static initialisation, read-only after
  return cases;
}
}  // namespace

void register_grad_case(GradCase c) { case_registry().push_back(std::move(c)); }
const std::vector<GradCase>& all_grad_cases() { return case_registry(); }

GradCheckResult run_grad_case(const GradCase& c, bool keep_values) {
  GradCheckOptions opts = c.options;
  opts.keep_values = keep_values;
  // Each case draws its inputs from a stream keyed by its name: reproducible, independent of the
  // order in which cases are registered or run.
  uint64_t key = 1469598103934665603ULL;
  for (char ch : c.name) key = (key ^ uint8_t(ch)) * 1099511628211ULL;
  Rng rng(opts.seed, key);
  return check_gradients(c.name, c.make_inputs(rng), c.build, opts);
}

std::vector<std::string> ops_without_grad_case() {
  std::set<std::string> covered;
  for (const GradCase& c : all_grad_cases()) covered.insert(c.op);
  std::vector<std::string> missing;
  for (const OpDef* op : all_ops())
    if (!op->leaf && !covered.count(op->name)) missing.push_back(op->name);
  return missing;
}

}  // namespace memgrad
