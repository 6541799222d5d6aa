// An op registered without a gradient-check case: gradcheck_all() must fail on it, whatever is
// selected to run, as memgrad's own test fails for one of ours ("every registered op has a
// gradient-check case").
#include <cstdio>
#include <memgrad/engine/op_def.hpp>
#include <memgrad/models/registry_check.hpp>

namespace {

MG_OP(unchecked_double);  // y = 2x, defined below with no MG_GRAD_CASE

void unchecked_double_backward(memgrad::Tape& tape, memgrad::NodeId id) {
  const memgrad::NodeId ix = tape.input_id(id, 0);
  if (!tape.requires_grad(ix)) return;
  const memgrad::Tensor& g = tape.grad(id);
  memgrad::Tensor& gx = tape.grad(ix);
  for (int64_t i = 0; i < g.numel(); ++i) gx.set(i, gx.at(i) + 2 * g.at(i));
}

}  // namespace

memgrad::Var unchecked_double(memgrad::Var x) {
  memgrad::Var y =
      x.tape->record(kOp_unchecked_double, x.shape(), x.dtype(), {x}, unchecked_double_backward);
  for (int64_t i = 0; i < x.value().numel(); ++i) x.tape->value(y.id).set(i, 2 * x.value().at(i));
  return y;
}

int main() {
  const memgrad::GradcheckReport report = memgrad::gradcheck_all({.ops = {}, .models = {}});
  std::fputs(report.summary().c_str(), stdout);
  return report.passed() ? 0 : 1;
}
