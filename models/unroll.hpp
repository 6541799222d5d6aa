// Backpropagation through a patient's admissions: consecutive batches of a task whose rows are
// patients (Task::rows_are_patients), run on one tape with each forward continuing the previous
// one's graph, so that a later admission's loss trains what an earlier admission wrote into the
// carried memory. With one batch per tape (the default) the carried state enters each admission
// as data and gradients stop at admission boundaries, as the DMNC paper's Algorithm 1 (an update
// after every admission) has it; unrolling K admissions is truncated backpropagation through time
// over windows of K.
#pragma once
#include <span>

#include "engine/batch.hpp"
#include "engine/tape.hpp"
#include "models/model.hpp"

namespace memgrad {

// Runs `batches` through `model` in order on `tape` (the first forward starts from the carried
// state as data, each later one continues the previous forward's graph) and returns the mean of
// their losses: every admission weighs the same, as each would in an update of its own. An Error
// when the list is empty, or when it has more than one batch and the model carries no state
// between batches (there would be nothing to backpropagate through).
Var unrolled_loss(Model& model, Tape& tape, std::span<const Batch* const> batches,
                  ForwardOptions opts = {});

}  // namespace memgrad
