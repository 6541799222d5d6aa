// Models fitted by an exact solver of their own instead of gradient steps (the convex baselines of
// task codiesp: l1-logreg, linear-svm). A Model that also derives from SolvedModel gets no update
// from the trainer: while needs_data() is true the trainer hands it every training batch of one
// epoch through observe() (last = the epoch's final batch) and its validation batches through
// observe_validation(), and the model's on_epoch_end() solves
// that epoch's problem (one point of a regularisation path) and sets its parameters.
#pragma once
#include "engine/batch.hpp"

namespace memgrad {

class SolvedModel {
 public:
  virtual ~SolvedModel() = default;
  virtual bool needs_data() const = 0;
  virtual void observe(const Batch& batch, bool last) = 0;
  // Then every validation batch of the task (none when it has none), last = the final one.
  virtual void observe_validation(const Batch& batch, bool last) { (void)batch, (void)last; }
};

}  // namespace memgrad
