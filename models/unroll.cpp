#include "models/unroll.hpp"

#include "engine/error.hpp"
#include "ops/ops.hpp"

namespace memgrad {

Var unrolled_loss(Model& model, Tape& tape, std::span<const Batch* const> batches,
                  ForwardOptions opts) {
  MG_CHECK(!batches.empty(), model.name(), ": unrolled_loss needs at least one batch");
  MG_CHECK(batches.size() == 1 || model.carries_state(), model.name(),
           " carries no state from one batch to the next (set --persistent-memory true, or a "
           "model that carries its state), so unrolling ",
           batches.size(), " admissions on one tape would backpropagate through nothing");
  Var total;
  for (size_t j = 0; j < batches.size(); ++j) {
    opts.continues_graph = j > 0;
    const Var loss = model.forward(tape, *batches[j], opts).loss;
    total = j == 0 ? loss : add(total, loss);
  }
  return batches.size() == 1 ? total : scale(total, 1.0 / double(batches.size()));
}

}  // namespace memgrad
