// Optimizers over a ParameterSet, and gradient clipping. State (momenta) is allocated once, at
// construction, so a step allocates nothing. State tensors are named for checkpoints.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "engine/parameter.hpp"

namespace memgrad {

class Optimizer {
 public:
  explicit Optimizer(ParameterSet& params) : params_(params) {}
  virtual ~Optimizer() = default;
  // One update from the parameters' current gradients (which it does not zero).
  virtual void step() = 0;
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
  void step() override;
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
  void step() override;
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
  void step() override;
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

}  // namespace memgrad
