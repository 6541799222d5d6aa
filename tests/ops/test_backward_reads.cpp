// The ops' BackwardReads declarations (engine/op_def.hpp): a tape that releases temporaries gives
// back, during the forward pass, every value no backward reads by these declarations, so one that
// claims too little would let a backward read memory another node has overwritten. Each
// gradient-check case of the registry runs twice: once as it is, once with every value declared
// unread filled with NaN before backward. The input gradients must be the same bit for bit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "engine/gradcheck.hpp"
#include "ops/ops.hpp"

using namespace memgrad;

namespace {

// The case's input gradients for a fixed random upstream gradient; with `poison`, every value no
// backward reads is NaN when backward runs. The case's inputs enter through a computed copy
// (add_scalar 0, or detach for indices, masks and the input `constant`, when >= 0, which then
// needs no gradient), so that they too are values a release could give back, not leaves owned
// by the caller.
std::vector<Tensor> input_gradients(const GradCase& c, const std::vector<GradInput>& inputs,
                                    bool poison, int constant = -1) {
  Tape tape(c.options.seed);
  std::vector<Var> leaves, vars;
  for (const GradInput& in : inputs) {
    const bool grad = in.differentiable && int(leaves.size()) != constant;
    Var leaf = tape.input(in.value, grad);
    leaves.push_back(leaf);
    vars.push_back(grad ? add_scalar(leaf, 0.0) : detach(leaf));
  }
  Var out = c.build(tape, vars);
  Rng rng(7);
  const Tensor upstream = random_tensor(rng, out.shape());
  if (poison) tape.poison_unread_values();
  tape.backward(out, upstream);
  std::vector<Tensor> grads;
  for (size_t k = 0; k < leaves.size(); ++k)
    grads.push_back(inputs[k].differentiable && tape.has_grad(leaves[k].id)
                        ? tape.grad(leaves[k].id).clone()
                        : Tensor());
  return grads;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.defined() != b.defined()) return false;
  if (!a.defined()) return true;
  return a.shape() == b.shape() && std::memcmp(a.raw(), b.raw(), a.bytes()) == 0;
}

}  // namespace

TEST_CASE("no backward reads a value its op declares unread (every gradient-check case)") {
  int cases = 0;
  for (const GradCase& c : all_grad_cases()) {
    Rng rng(c.options.seed);
    const std::vector<GradInput> inputs = c.make_inputs(rng);
    // As the case is, and with each differentiable input in turn a constant (a product's other
    // factor is then declared unread: BackwardReads::pair).
    for (int constant = -1; constant < int(inputs.size()); ++constant) {
      if (constant >= 0 && !inputs[size_t(constant)].differentiable) continue;
      const std::vector<Tensor> clean = input_gradients(c, inputs, false, constant);
      const std::vector<Tensor> poisoned = input_gradients(c, inputs, true, constant);
      for (size_t k = 0; k < clean.size(); ++k) {
        INFO(c.name, ": input ", k, "'s gradient (input ", constant,
             " constant) changes when the values declared unread are NaN");
        CHECK(same_bits(clean[k], poisoned[k]));
      }
    }
    ++cases;
  }
  CHECK(cases >= 40);
}

TEST_CASE("poisoning reaches values an op declares unread") {
  // The test above could not fail if poison_unread_values poisoned nothing: sigmoid reads only its
  // output, so its input (a computed copy) is NaN afterwards, and mul's inputs are not.
  Tape tape;
  Tensor x = Tensor::zeros(Shape{3}, DType::f64);
  Var a = add_scalar(tape.input(x, true), 0.5);
  Var s = sigmoid(a);
  Var m = mul(s, add_scalar(tape.input(x, true), 2.0));
  (void)m;
  tape.poison_unread_values();
  CHECK(std::isnan(a.value().at(0)));
  CHECK(!std::isnan(s.value().at(0)));
  CHECK(std::isnan(m.value().at(0)));  // nothing reads the final output here
}
