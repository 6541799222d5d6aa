#include "engine/optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#if defined(__SSE__)
#include <immintrin.h>
#endif

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

// A GradClip in the element type: what a step reads in place of g.
template <class T>
struct Clip {
  T pre, lo, hi, post;
  explicit Clip(const GradClip& c)
      : pre(T(c.pre)), lo(T(-c.limit)), hi(T(c.limit)), post(T(c.post)) {}
  // The float operations of clip_grad_norm (g *= pre) and clip_grad_value, in the same order, on
  // one element or lane by lane on a SIMD vector of them.
  template <class V>
  V operator()(V g) const {
    g *= pre;
    g = g < lo ? lo : g;  // two selects, written so that they vectorize
    g = g > hi ? hi : g;
    return g * post;
  }
};

// The widest float vector this CPU has, with its square root: the compiler will not vectorize
// std::sqrt by itself (it may set errno). Square roots and divisions are correctly rounded at
// every width, so the width does not change a result.
#if defined(__AVX512F__)
using FloatVec = __m512;
FloatVec vec_sqrt(FloatVec x) { return _mm512_sqrt_ps(x); }
#elif defined(__AVX__)
using FloatVec = __m256;
FloatVec vec_sqrt(FloatVec x) { return _mm256_sqrt_ps(x); }
#elif defined(__SSE__)
using FloatVec = __m128;
FloatVec vec_sqrt(FloatVec x) { return _mm_sqrt_ps(x); }
#endif

// Adam's update of the first elements of w, m, v in SIMD groups; returns how many it did (the
// caller's scalar loop does the rest). Only float32 has a version. Every operation is the scalar
// loop's, in the same order, so the result is bit for bit the same.
template <class T>
int64_t adam_simd(T*, T*, T*, T*, int64_t, bool, const Clip<T>&, T, T, T, T, T) {
  return 0;
}
#if defined(__SSE__)
template <>
int64_t adam_simd<float>(float* w, float* m, float* v, float* g, int64_t n, bool zero_grads,
                         const Clip<float>& clip, float b1, float b2, float step, float inv_c2,
                         float eps) {
  constexpr int64_t kLanes = sizeof(FloatVec) / sizeof(float);
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    FloatVec mj, vj, wj, gj;
    std::memcpy(&mj, m + j, sizeof mj);
    std::memcpy(&vj, v + j, sizeof vj);
    std::memcpy(&wj, w + j, sizeof wj);
    std::memcpy(&gj, g + j, sizeof gj);
    if (zero_grads) std::memset(g + j, 0, sizeof gj);
    gj = clip(gj);
    mj = b1 * mj + (1.0f - b1) * gj;
    vj = b2 * vj + (1.0f - b2) * gj * gj;
    wj -= step * mj / (vec_sqrt(vj * inv_c2) + eps);
    std::memcpy(m + j, &mj, sizeof mj);
    std::memcpy(v + j, &vj, sizeof vj);
    std::memcpy(w + j, &wj, sizeof wj);
  }
  return j;
}
#endif

// The sum of f(x[j])^2 over j in double, for gradient norms (sixteen partial sums: see
// sum_in_double).
template <class T, class F>
double sum_of_squares(const T* x, int64_t n, F f) {
  return sum_in_double<16>(x, n, [&](T v) { return square_in_double(f(v)); });
}

// The factor clip_grad_norm scales by, 1 if it does not.
double norm_scale(double norm, double max_norm) {
  return norm > max_norm && norm > 0 ? max_norm / norm : 1.0;
}

}  // namespace

Sgd::Sgd(ParameterSet& params, double lr, double momentum)
    : Optimizer(params), momentum_(momentum) {
  lr_ = lr;
  if (momentum_ != 0.0) velocity_ = zeros_like(params);
}

void Sgd::step(const GradClip& clip, bool zero_grads) {
  ++steps_;
  for (size_t i = 0; i < params_.size(); ++i) {
    Parameter& p = params_[i];
    MG_DISPATCH(p.value.dtype(), T, {
      T* w = p.value.data<T>();
      T* g = p.grad.data<T>();
      const Clip<T> c(clip);
      const int64_t n = p.value.numel();
      T* v = momentum_ != 0.0 ? velocity_[i].data<T>() : nullptr;
      for (int64_t j = 0; j < n; ++j) {
        const T gj = c(g[j]);
        if (zero_grads) g[j] = T(0);
        if (v) {
          v[j] = T(momentum_) * v[j] + gj;
          w[j] -= T(lr_) * v[j];
        } else {
          w[j] -= T(lr_) * gj;
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

void Adam::step(const GradClip& clip, bool zero_grads) {
  ++steps_;
  const double c1 = 1.0 - std::pow(beta1_, double(steps_));
  const double c2 = 1.0 - std::pow(beta2_, double(steps_));
  for (size_t i = 0; i < params_.size(); ++i) {
    Parameter& p = params_[i];
    MG_DISPATCH(p.value.dtype(), T, {
      T* w = p.value.data<T>();
      T* m = m_[i].data<T>();
      T* v = v_[i].data<T>();
      T* g = p.grad.data<T>();
      const Clip<T> c(clip);
      const T b1 = T(beta1_), b2 = T(beta2_);
      const T step = T(lr_ / c1), inv_c2 = T(1.0 / c2), eps = T(eps_);
      const int64_t n = p.value.numel();
      int64_t j = adam_simd(w, m, v, g, n, zero_grads, c, b1, b2, step, inv_c2, eps);
      for (; j < n; ++j) {
        const T gj = c(g[j]);
        if (zero_grads) g[j] = T(0);
        m[j] = b1 * m[j] + (T(1) - b1) * gj;
        v[j] = b2 * v[j] + (T(1) - b2) * gj * gj;
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

void RmsProp::step(const GradClip& clip, bool zero_grads) {
  ++steps_;
  for (size_t i = 0; i < params_.size(); ++i) {
    Parameter& p = params_[i];
    MG_DISPATCH(p.value.dtype(), T, {
      T* w = p.value.data<T>();
      T* s = square_[i].data<T>();
      T* g = p.grad.data<T>();
      const Clip<T> c(clip);
      const T rho = T(rho_), lr = T(lr_), eps = T(eps_);
      T* v = momentum_ != 0.0 ? velocity_[i].data<T>() : nullptr;
      for (int64_t j = 0; j < p.value.numel(); ++j) {
        const T gj = c(g[j]);
        if (zero_grads) g[j] = T(0);
        s[j] = rho * s[j] + (T(1) - rho) * gj * gj;
        const T update = lr * gj / (std::sqrt(s[j]) + eps);
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
    MG_DISPATCH(g.dtype(), T,
                { total += sum_of_squares(g.data<T>(), g.numel(), [](T x) { return x; }); });
  }
  return std::sqrt(total);
}

double clip_grad_norm(ParameterSet& params, double max_norm) {
  const double norm = grad_norm(params);
  if (const double factor = norm_scale(norm, max_norm); factor != 1.0) {
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
      GradClip value_only;  // pre and post 1: exact, so only the clamp acts
      value_only.limit = limit;
      const Clip<T> clamp(value_only);
      for (int64_t j = 0; j < g.numel(); ++j) p[j] = clamp(p[j]);
    });
  }
}

GradClip plan_grad_clip(const ParameterSet& params, double clip_norm, double clip_value,
                        ClipOrder order) {
  GradClip clip;
  if (clip_value > 0) clip.limit = clip_value;
  const bool clamped_norm = order == ClipOrder::kValueThenNorm && clip_norm > 0 && clip_value > 0;
  // The norm as given (for the log and the norm-first scale) and, value-first, the norm of the
  // clamped gradients: grad_norm's sum, so bit for bit the separate passes' norms.
  clip.norm = grad_norm(params);
  double clamped = 0;
  if (clamped_norm)
    for (size_t i = 0; i < params.size(); ++i) {
      const Tensor& g = params[i].grad;
      MG_DISPATCH(g.dtype(), T,
                  { clamped += sum_of_squares(g.data<T>(), g.numel(), Clip<T>(clip)); });
    }
  if (clip_norm > 0 && order == ClipOrder::kNormThenValue)
    clip.pre = norm_scale(clip.norm, clip_norm);
  else if (clip_norm > 0)
    clip.post = norm_scale(clamped_norm ? std::sqrt(clamped) : clip.norm, clip_norm);
  return clip;
}

}  // namespace memgrad
