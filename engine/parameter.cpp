#include "engine/parameter.hpp"

#include <cmath>

namespace memgrad {

Parameter& ParameterSet::add(const std::string& name, const Shape& shape) {
  MG_CHECK(!name.empty(), "parameter name must not be empty");
  MG_CHECK(find(name) == nullptr, "parameter '", name, "' defined twice");
  auto p = std::make_unique<Parameter>();
  p->name = name;
  p->value = Tensor::zeros(shape, dtype_);
  p->grad = Tensor::zeros(shape, dtype_);
  params_.push_back(std::move(p));
  return *params_.back();
}

Parameter& ParameterSet::add_uniform(const std::string& name, const Shape& shape, double lo,
                                     double hi, Rng& rng) {
  Parameter& p = add(name, shape);
  for (int64_t i = 0; i < p.value.numel(); ++i) p.value.set(i, rng.uniform(lo, hi));
  return p;
}

Parameter& ParameterSet::add_normal(const std::string& name, const Shape& shape, double stddev,
                                    Rng& rng) {
  Parameter& p = add(name, shape);
  for (int64_t i = 0; i < p.value.numel(); ++i) p.value.set(i, stddev * rng.normal());
  return p;
}

Parameter& ParameterSet::add_glorot(const std::string& name, const Shape& shape, Rng& rng) {
  MG_CHECK(shape.rank >= 2, "add_glorot: '", name, "' needs a matrix shape, got ", shape);
  const double fan_in = double(shape[-2]), fan_out = double(shape[-1]);
  const double limit = std::sqrt(6.0 / (fan_in + fan_out));
  return add_uniform(name, shape, -limit, limit, rng);
}

Parameter* ParameterSet::find(const std::string& name) {
  for (auto& p : params_)
    if (p->name == name) return p.get();
  return nullptr;
}

Parameter& ParameterSet::get(const std::string& name) {
  Parameter* p = find(name);
  MG_CHECK(p != nullptr, "no parameter named '", name, "'");
  return *p;
}

int64_t ParameterSet::count() const {
  int64_t n = 0;
  for (auto& p : params_) n += p->value.numel();
  return n;
}

void ParameterSet::zero_grad() {
  for (auto& p : params_) p->grad.zero();
}

void ParameterSet::to(DType dtype) {
  dtype_ = dtype;
  for (auto& p : params_) {
    if (p->value.dtype() == dtype) continue;
    p->value = p->value.to(dtype);
    p->grad = p->grad.to(dtype);
  }
}

}  // namespace memgrad
