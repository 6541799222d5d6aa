// Parameters live outside the tape: a name (for checkpoints), a value, and a persistent gradient
// that backward passes accumulate into and optimizers consume.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "engine/rng.hpp"
#include "engine/tensor.hpp"

namespace memgrad {

struct Parameter {
  std::string name;
  Tensor value;
  Tensor grad;  // same shape and dtype as value; zeroed by ParameterSet::zero_grad
};

// An ordered, named collection of parameters (a model's weights). Order is creation order, which
// fixes the order of every reduction over parameters (clipping norms, checkpoints).
class ParameterSet {
 public:
  explicit ParameterSet(DType dtype = DType::f32) : dtype_(dtype) {}
  ParameterSet(const ParameterSet&) = delete;
  ParameterSet& operator=(const ParameterSet&) = delete;

  // Creates a zero-initialised parameter. Names must be unique.
  Parameter& add(const std::string& name, const Shape& shape);
  // Initialisers (draws from rng in element order).
  Parameter& add_uniform(const std::string& name, const Shape& shape, double lo, double hi,
                         Rng& rng);
  Parameter& add_normal(const std::string& name, const Shape& shape, double stddev, Rng& rng);
  // Glorot/Xavier uniform over a [fan_in, fan_out] matrix.
  Parameter& add_glorot(const std::string& name, const Shape& shape, Rng& rng);

  Parameter* find(const std::string& name);
  Parameter& get(const std::string& name);
  size_t size() const { return params_.size(); }
  Parameter& operator[](size_t i) { return *params_[i]; }
  const Parameter& operator[](size_t i) const { return *params_[i]; }
  DType dtype() const { return dtype_; }
  int64_t count() const;  // total number of scalars

  void zero_grad();
  // Converts every value (and grad) to dtype, e.g. float64 for gradient checks.
  void to(DType dtype);

 private:
  DType dtype_;
  std::vector<std::unique_ptr<Parameter>> params_;
};

}  // namespace memgrad
