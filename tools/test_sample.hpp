// One test sample as evaluation sees it, for the commands that show a single sample (`memgrad
// inspect`, `memgrad figure`): a model that carries memory from batch to batch (a persistent DMNC,
// whose rows are patients) first runs the patient's earlier admissions, so that its memory holds
// at the sample what it held there in evaluation.
#pragma once
#include <cstdint>

#include "engine/batch.hpp"
#include "models/model.hpp"
#include "tasks/task.hpp"

namespace memgrad::cli {

// Fills `batch` with test sample `sample` after running the task's context batches for it
// (Task::test_example_context) through `model`, without training and without a trace.
void load_test_sample(Task& task, Model& model, int64_t sample, DType dtype, Batch& batch);

}  // namespace memgrad::cli
