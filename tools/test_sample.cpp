#include "tools/test_sample.hpp"

#include "engine/tape.hpp"

namespace memgrad::cli {

void load_test_sample(Task& task, Model& model, int64_t sample, DType dtype, Batch& batch) {
  const int64_t context = task.test_example_context(sample);
  if (context > 0) {
    Tape earlier;
    ForwardOptions plain;
    plain.training = false;
    for (int64_t k = 0; k < context; ++k) {
      earlier.reset();
      task.test_example_context_batch(sample, k, dtype, batch);
      model.forward(earlier, batch, plain);
    }
  }
  task.test_example(sample, dtype, batch);
}

}  // namespace memgrad::cli
