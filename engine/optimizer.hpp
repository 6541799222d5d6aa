// Optimizers over a ParameterSet, and gradient clipping. State (momenta) is allocated once, at
// construction, so a step allocates nothing. State tensors are named for checkpoints.
#pragma once
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "engine/parameter.hpp"

namespace memgrad {

// Gradient clipping folded into an optimizer step: the step uses clamp(g * pre, -limit, limit) *
// post in place of each gradient element g, computed in registers, so clipping costs no pass of
// its own over the gradients (plan_grad_clip makes one from a recipe). At most one of pre and post
// is a norm scale, the other 1: multiplying by 1 and clamping to infinity are exact (NaN stays
// NaN), so the default clips nothing and rounds nothing.
struct GradClip {
  double norm = 0;  // global L2 norm of the gradients before clipping (for logs)
  double pre = 1;
  double limit = std::numeric_limits<double>::infinity();
  double post = 1;
};

class Optimizer {
 public:
  explicit Optimizer(ParameterSet& params) : params_(params) {}
  virtual ~Optimizer() = default;
  // One update from the parameters' current gradients (which it does not zero).
  void step() { step(GradClip{}, false); }
  // One update from the gradients clipped as `clip` says. With zero_grads each gradient is zeroed
  // once read (as the next backward pass needs), which saves the caller a pass of its own.
  virtual void step(const GradClip& clip, bool zero_grads) = 0;
  // Named state tensors (e.g. "adam.m/lstm.W"), for checkpoints; `steps` is the update count.
  virtual std::vector<std::pair<std::string, Tensor*>> state() = 0;
  int64_t steps() const { return steps_; }
  void set_steps(int64_t s) { steps_ = s; }
  double learning_rate() const { return lr_; }
  void set_learning_rate(double lr) { lr_ = lr; }

 protected:
  ParameterSet& params_;
  int64_t steps_ = 0;
  double lr_ = 0;
};

// SGD with (optional) momentum: v = mu v + g; w -= lr v.
class Sgd : public Optimizer {
 public:
  Sgd(ParameterSet& params, double lr, double momentum = 0.0);
  using Optimizer::step;
  void step(const GradClip& clip, bool zero_grads) override;
  std::vector<std::pair<std::string, Tensor*>> state() override;

 private:
  double momentum_;
  std::vector<Tensor> velocity_;
};

// Adam (Kingma & Ba 2015) with bias correction; defaults are the paper's.
class Adam : public Optimizer {
 public:
  Adam(ParameterSet& params, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
       double eps = 1e-8);
  using Optimizer::step;
  void step(const GradClip& clip, bool zero_grads) override;
  std::vector<std::pair<std::string, Tensor*>> state() override;

 private:
  double beta1_, beta2_, eps_;
  std::vector<Tensor> m_, v_;
};

// RMSProp (Tieleman & Hinton): s = rho s + (1-rho) g^2; w -= lr g / (sqrt(s) + eps), with
// optional momentum on the scaled step.
class RmsProp : public Optimizer {
 public:
  RmsProp(ParameterSet& params, double lr = 1e-3, double rho = 0.9, double eps = 1e-8,
          double momentum = 0.0);
  using Optimizer::step;
  void step(const GradClip& clip, bool zero_grads) override;
  std::vector<std::pair<std::string, Tensor*>> state() override;

 private:
  double rho_, eps_, momentum_;
  std::vector<Tensor> square_, velocity_;
};

// Global L2 norm of all gradients (summed in parameter order, in double).
double grad_norm(const ParameterSet& params);
// Scales all gradients so their global norm is at most max_norm; returns the norm before.
double clip_grad_norm(ParameterSet& params, double max_norm);
// Clamps every gradient element to [-limit, limit].
void clip_grad_value(ParameterSet& params, double limit);

// The order of the two clips of a recipe. They agree unless some gradient element exceeds
// clip_value. Then norm-first keeps the gradient's direction and clamps only what the scale left
// above clip_value (nothing when clip_norm <= clip_value), while value-first clamps the outliers
// and scales by the norm of the clamped gradients.
enum class ClipOrder {
  kNormThenValue,  // clip_grad_norm, then clip_grad_value (memgrad train)
  kValueThenNorm,  // clip_grad_value, then clip_grad_norm
};

// The clipping "by global norm to clip_norm and by value to clip_value" (0 = off) in `order`, for
// Optimizer::step. It reads the gradients once (twice value-first: the clamped norm too),
// summing in double in parameter order, so the result is the same on every run. The step then
// updates exactly as after the two clip_grad_ calls: the same operations on every element.
GradClip plan_grad_clip(const ParameterSet& params, double clip_norm, double clip_value,
                        ClipOrder order);

}  // namespace memgrad
