#include "engine/optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/sum_in_double.hpp"

namespace memgrad {
namespace {

std::vector<Tensor> zeros_like(ParameterSet& params) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < params.size(); ++i)
    out.push_back(Tensor::zeros(params[i].value.shape(), params[i].value.dtype()));
  return out;
}

std::vector<std::pair<std::string, Tensor*>> named(const char* prefix, ParameterSet& params,
                                                   std::vector<Tensor>& tensors) {
  std::vector<std::pair<std::string, Tensor*>> out;
  for (size_t i = 0; i < tensors.size(); ++i)
    out.emplace_back(std::string(prefix) + "/" + params[i].name, &tensors[i]);
  return out;
}

// Adam's update of the first elements of w, m, v in SIMD groups; returns how many it did (the
// caller's scalar loop does the rest). Only float32 on SSE has a version: the compiler will not
// vectorize std::sqrt by itself (it may set errno), so the square root is SSE's sqrtps. Every
// operation is the scalar loop's, in the same order, so the result is bit for bit the same.
template <class T>
int64_t adam_simd(T*, T*, T*, const T*, int64_t, T, T, T, T, T) {
  return 0;
}
#if defined(__SSE__)
template <>
int64_t adam_simd<float>(float* w, float* m, float* v, const float* g, int64_t n, float b1,
                         float b2, float step, float inv_c2, float eps) {
  using f32x4 = float __attribute__((vector_size(16)));
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    f32x4 mj, vj, wj, gj;
    std::memcpy(&mj, m + j, sizeof mj);
    std::memcpy(&vj, v + j, sizeof vj);
    std::memcpy(&wj, w + j, sizeof wj);
    std::memcpy(&gj, g + j, sizeof gj);
    mj = b1 * mj + (1.0f - b1) * gj;
    vj = b2 * vj + (1.0f - b2) * gj * gj;
    wj -= step * mj / (__builtin_ia32_sqrtps(vj * inv_c2) + eps);
    std::memcpy(m + j, &mj, sizeof mj);
    std::memcpy(v + j, &vj, sizeof vj);
    std::memcpy(w + j, &wj, sizeof wj);
  }
  return j;
}
#endif

}  // namespace

Sgd::Sgd(ParameterSet& params, double lr, double momentum)
    : Optimizer(params), momentum_(momentum) {
  lr_ = lr;
  if (momentum_ != 0.0) velocity_ = zeros_like(params);
}

void Sgd::step() {
  ++steps_;
  for (size_t i = 0; i < params_.size(); ++i) {
    Parameter& p = params_[i];
    MG_DISPATCH(p.value.dtype(), T, {
      T* w = p.value.data<T>();
      const T* g = p.grad.data<T>();
      const int64_t n = p.value.numel();
      if (momentum_ == 0.0) {
        for (int64_t j = 0; j < n; ++j) w[j] -= T(lr_) * g[j];
      } else {
        T* v = velocity_[i].data<T>();
        for (int64_t j = 0; j < n; ++j) {
          v[j] = T(momentum_) * v[j] + g[j];
          w[j] -= T(lr_) * v[j];
        }
      }
    });
  }
}

std::vector<std::pair<std::string, Tensor*>> Sgd::state() {
  return named("sgd.velocity", params_, velocity_);
}

Adam::Adam(ParameterSet& params, double lr, double beta1, double beta2, double eps)
    : Optimizer(params), beta1_(beta1), beta2_(beta2), eps_(eps) {
  lr_ = lr;
  m_ = zeros_like(params);
  v_ = zeros_like(params);
}

void Adam::step() {
  ++steps_;
  const double c1 = 1.0 - std::pow(beta1_, double(steps_));
  const double c2 = 1.0 - std::pow(beta2_, double(steps_));
  for (size_t i = 0; i < params_.size(); ++i) {
    Parameter& p = params_[i];
    MG_DISPATCH(p.value.dtype(), T, {
      T* w = p.value.data<T>();
      T* m = m_[i].data<T>();
      T* v = v_[i].data<T>();
      const T* g = p.grad.data<T>();
      const T b1 = T(beta1_), b2 = T(beta2_);
      const T step = T(lr_ / c1), inv_c2 = T(1.0 / c2), eps = T(eps_);
      const int64_t n = p.value.numel();
      int64_t j = adam_simd(w, m, v, g, n, b1, b2, step, inv_c2, eps);
      for (; j < n; ++j) {
        m[j] = b1 * m[j] + (T(1) - b1) * g[j];
        v[j] = b2 * v[j] + (T(1) - b2) * g[j] * g[j];
        w[j] -= step * m[j] / (std::sqrt(v[j] * inv_c2) + eps);
      }
    });
  }
}

std::vector<std::pair<std::string, Tensor*>> Adam::state() {
  auto out = named("adam.m", params_, m_);
  auto v = named("adam.v", params_, v_);
  out.insert(out.end(), v.begin(), v.end());
  return out;
}

RmsProp::RmsProp(ParameterSet& params, double lr, double rho, double eps, double momentum)
    : Optimizer(params), rho_(rho), eps_(eps), momentum_(momentum) {
  lr_ = lr;
  square_ = zeros_like(params);
  if (momentum_ != 0.0) velocity_ = zeros_like(params);
}

void RmsProp::step() {
  ++steps_;
  for (size_t i = 0; i < params_.size(); ++i) {
    Parameter& p = params_[i];
    MG_DISPATCH(p.value.dtype(), T, {
      T* w = p.value.data<T>();
      T* s = square_[i].data<T>();
      const T* g = p.grad.data<T>();
      const T rho = T(rho_), lr = T(lr_), eps = T(eps_);
      T* v = momentum_ != 0.0 ? velocity_[i].data<T>() : nullptr;
      for (int64_t j = 0; j < p.value.numel(); ++j) {
        s[j] = rho * s[j] + (T(1) - rho) * g[j] * g[j];
        const T update = lr * g[j] / (std::sqrt(s[j]) + eps);
        if (v) {
          v[j] = T(momentum_) * v[j] + update;
          w[j] -= v[j];
        } else {
          w[j] -= update;
        }
      }
    });
  }
}

std::vector<std::pair<std::string, Tensor*>> RmsProp::state() {
  auto out = named("rmsprop.square", params_, square_);
  auto v = named("rmsprop.velocity", params_, velocity_);
  out.insert(out.end(), v.begin(), v.end());
  return out;
}

double grad_norm(const ParameterSet& params) {
  double total = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& g = params[i].grad;
    MG_DISPATCH(g.dtype(), T, {
      const T* p = g.data<T>();
      total += sum_in_double(p, g.numel(), square_in_double<T>);
    });
  }
  return std::sqrt(total);
}

double clip_grad_norm(ParameterSet& params, double max_norm) {
  const double norm = grad_norm(params);
  if (norm > max_norm && norm > 0) {
    const double factor = max_norm / norm;
    for (size_t i = 0; i < params.size(); ++i) {
      Tensor& g = params[i].grad;
      MG_DISPATCH(g.dtype(), T, {
        T* p = g.data<T>();
        for (int64_t j = 0; j < g.numel(); ++j) p[j] *= T(factor);
      });
    }
  }
  return norm;
}

void clip_grad_value(ParameterSet& params, double limit) {
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor& g = params[i].grad;
    MG_DISPATCH(g.dtype(), T, {
      T* p = g.data<T>();
      const int64_t n = g.numel();
      const T lo = T(-limit), hi = T(limit);
      for (int64_t j = 0; j < n; ++j) {  // two selects, written so that they vectorize
        const T v = p[j] < lo ? lo : p[j];
        p[j] = v > hi ? hi : v;
      }
    });
  }
}

}  // namespace memgrad
