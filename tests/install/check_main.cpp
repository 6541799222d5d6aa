// This project's test: memgrad's registry sees its own ops and models and this project's
// (sparsemax, sparse-reader) alike; the gradient checks of ours pass; the model trains.
#include <cstdio>
#include <memgrad/engine/optimizer.hpp>
#include <memgrad/models/registry_check.hpp>
#include <string>

#include "sparse_reader.hpp"

namespace {

int failures = 0;
void expect(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what.c_str());
  failures += ok ? 0 : 1;
}

bool has_op(const std::string& name) {
  for (const memgrad::OpDef* op : memgrad::all_ops())
    if (name == op->name) return true;
  return false;
}
bool has_model(const std::string& name) {
  for (const memgrad::ModelInfo& m : memgrad::all_models())
    if (m.name == name) return true;
  return false;
}

// Mean loss of `steps` Adam steps on fresh toy batches.
double train(memgrad::Model& model, memgrad::Optimizer& opt, memgrad::Rng& rng, int steps) {
  memgrad::Batch batch;
  memgrad::Tape tape;
  double total = 0;
  for (int s = 0; s < steps; ++s) {
    custom::make_toy_batch(rng, memgrad::DType::f32, 32, 5, 8, 3, batch);
    tape.reset();
    const memgrad::Var loss = model.forward(tape, batch, {}).loss;
    tape.backward(loss);
    opt.step(memgrad::GradClip{}, true);
    total += loss.value().at(0);
  }
  return total / steps;
}

}  // namespace

int main() {
  // Every op and model file of the installed library registered itself in this program (a static
  // library linked without --whole-archive would have dropped them), and so did ours.
  expect(memgrad::all_ops().size() >= 40, std::to_string(memgrad::all_ops().size()) + " ops");
  for (const char* op : {"add", "matmul", "softmax", "cumprod_exclusive", "sparsemax"})
    expect(has_op(op), std::string("op ") + op + " registered");
  for (const char* model : {"dmnc-late", "memn2n", "ebmrnn", "sparse-reader"})
    expect(has_model(model), std::string("model ") + model + " registered");

  // The gradient checks of our op and model, and of one of memgrad's ops through the same call.
  const memgrad::GradcheckReport report =
      memgrad::gradcheck_all({.ops = {"sparsemax", "softmax"}, .models = {"sparse-reader"}});
  std::fputs(report.summary().c_str(), stdout);
  expect(report.passed(), "gradcheck_all");
  int ours = 0;
  for (const memgrad::GradCheckResult& r : report.results)
    ours += r.name.rfind("sparsemax/", 0) == 0 || r.name.rfind("sparse-reader/", 0) == 0;
  expect(ours == 6, std::to_string(ours) + " checks of sparsemax and sparse-reader ran (4 + 2)");

  // A few training steps: the loss falls.
  std::unique_ptr<memgrad::Model> model = memgrad::create_model(
      "sparse-reader", {{"width", 8}, {"classes", 3}}, memgrad::DType::f32, 1);
  memgrad::Adam adam(model->params(), 3e-2);
  memgrad::Rng rng(5);
  const double first = train(*model, adam, rng, 10);
  train(*model, adam, rng, 60);
  const double last = train(*model, adam, rng, 10);
  std::printf("mean loss: first 10 steps %.4f, steps 71-80 %.4f\n", first, last);
  expect(last < 0.8 * first, "training lowers the loss by a fifth");

  std::printf("%d failed\n", failures);
  return failures == 0 ? 0 : 1;
}
