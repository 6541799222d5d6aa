#include "engine/tensor.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sstream>

#include "engine/arena.hpp"

namespace memgrad {

Shape::Shape(std::initializer_list<int64_t> d) {
  MG_CHECK(d.size() <= size_t(kMaxRank), "shape of rank ", d.size(), " exceeds the maximum of 4");
  for (int64_t v : d) {
    MG_CHECK(v >= 0, "negative dimension ", v, " in shape");
    dims[rank++] = v;
  }
}

Shape Shape::of(const int64_t* d, int r) {
  MG_CHECK(r >= 0 && r <= kMaxRank, "shape of rank ", r, " exceeds the maximum of 4");
  Shape s;
  s.rank = r;
  for (int i = 0; i < r; ++i) {
    MG_CHECK(d[i] >= 0, "negative dimension ", d[i], " in shape");
    s.dims[i] = d[i];
  }
  return s;
}

bool Shape::operator==(const Shape& o) const {
  if (rank != o.rank) return false;
  for (int i = 0; i < rank; ++i)
    if (dims[i] != o.dims[i]) return false;
  return true;
}

std::string Shape::str() const {
  std::ostringstream out;
  out << '[';
  for (int i = 0; i < rank; ++i) out << (i ? "," : "") << dims[i];
  out << ']';
  return out.str();
}

std::ostream& operator<<(std::ostream& out, const Shape& s) { return out << s.str(); }

namespace {
constexpr std::align_val_t kStorageAlign{64};
}

Storage::Storage(size_t bytes) {
  // 64-byte alignment suits AVX-512 loads and keeps rows of different tensors off shared cache
  // lines.
  size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  // Through operator new, not aligned_alloc, so that the allocation counter (alloc_counter.cpp)
  // sees the buffer as well as make_shared's control block.
  try {
    data = ::operator new(rounded, kStorageAlign);
  } catch (const std::bad_alloc&) {
    fail("out of memory allocating ", bytes, " bytes");
  }
  capacity = rounded;
  owned = true;
}

Storage::~Storage() {
  if (owned) ::operator delete(data, kStorageAlign);
}

Tensor Tensor::empty(const Shape& shape, DType dtype) {
  Tensor t;
  t.shape_ = shape;
  t.dtype_ = dtype;
  t.storage_ = std::make_shared<Storage>(t.bytes());
  return t;
}

Tensor Tensor::zeros(const Shape& shape, DType dtype) {
  Tensor t = empty(shape, dtype);
  t.zero();
  return t;
}

Tensor Tensor::full(const Shape& shape, DType dtype, double value) {
  Tensor t = empty(shape, dtype);
  t.fill(value);
  return t;
}

Tensor Tensor::from(const Shape& shape, DType dtype, const std::vector<double>& values) {
  MG_CHECK(int64_t(values.size()) == shape.numel(), "Tensor::from: ", values.size(),
           " values for shape ", shape);
  Tensor t = empty(shape, dtype);
  MG_DISPATCH(dtype, T, {
    T* p = t.data<T>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = T(values[i]);
  });
  return t;
}

double Tensor::at(int64_t i) const {
  MG_CHECK(i >= 0 && i < numel(), "index ", i, " out of range for shape ", shape_);
  double v = 0;
  MG_DISPATCH(dtype_, T, v = double(data<T>()[i]));
  return v;
}

void Tensor::set(int64_t i, double v) {
  MG_CHECK(i >= 0 && i < numel(), "index ", i, " out of range for shape ", shape_);
  MG_DISPATCH(dtype_, T, data<T>()[i] = T(v));
}

std::vector<double> Tensor::to_vector() const {
  std::vector<double> out(static_cast<size_t>(numel()));
  MG_DISPATCH(dtype_, T, {
    const T* p = data<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = double(p[i]);
  });
  return out;
}

void Tensor::fill(double v) {
  MG_DISPATCH(dtype_, T, {
    T* p = data<T>();
    const int64_t n = numel();
    for (int64_t i = 0; i < n; ++i) p[i] = T(v);
  });
}

void Tensor::zero() {
  if (defined()) std::memset(raw(), 0, bytes());
}

Tensor Tensor::clone() const {
  Tensor t = empty(shape_, dtype_);
  std::memcpy(t.raw(), raw(), bytes());
  return t;
}

Tensor Tensor::to(DType dtype) const {
  if (dtype == dtype_) return clone();
  Tensor t = empty(shape_, dtype);
  t.copy_from(*this);
  return t;
}

Tensor Tensor::view(const Shape& shape) const {
  MG_CHECK(shape.numel() == numel(), "view: cannot view shape ", shape_, " as ", shape);
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

Tensor Tensor::leading(const Shape& shape) const {
  MG_CHECK(shape.numel() <= numel(), "leading: ", shape, " has more elements than ", shape_);
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

void Tensor::copy_from(const Tensor& src) {
  MG_CHECK(src.numel() == numel(), "copy_from: ", src.shape(), " into ", shape_);
  if (src.dtype_ == dtype_) {
    std::memcpy(raw(), src.raw(), bytes());
    return;
  }
  MG_DISPATCH(dtype_, T, MG_DISPATCH(src.dtype_, S, {
                const S* s = src.data<S>();
                T* d = data<T>();
                for (int64_t i = 0; i < numel(); ++i) d[i] = T(s[i]);
              }));
}

void Tensor::reshape_reuse(const Shape& shape, DType dtype) {
  const size_t need = size_t(shape.numel()) * dtype_size(dtype);
  if (storage_ && storage_.use_count() == 1 && storage_->capacity >= need) {
    shape_ = shape;
    dtype_ = dtype;
    return;
  }
  *this = empty(shape, dtype);
}

Tensor Tensor::arena_slot() {
  Tensor t;
  t.storage_ = std::make_shared<Storage>();
  return t;
}

void Tensor::bind_to_arena(Arena& arena, const Shape& shape, DType dtype) {
  if (!storage_ || storage_.use_count() != 1 || storage_->owned)
    storage_ = std::make_shared<Storage>();
  const size_t need = size_t(shape.numel()) * dtype_size(dtype);
  storage_->data = arena.take(need);
  storage_->capacity = Arena::rounded(need);
  shape_ = shape;
  dtype_ = dtype;
}

void Tensor::release_arena_memory() {
  if (!storage_ || storage_->owned || storage_.use_count() == 1) return;
  // Someone kept this value: the memory becomes a heap buffer of theirs, copied out of the arena
  // before the arena hands it to the next step.
  Storage& s = *storage_;
  void* copy = nullptr;
  try {
    copy = ::operator new(s.capacity, kStorageAlign);
  } catch (const std::bad_alloc&) {
    fail("out of memory allocating ", s.capacity, " bytes");
  }
  std::memcpy(copy, s.data, s.capacity);
  s.data = copy;
  s.owned = true;
  storage_.reset();
}

int64_t first_non_finite(const Tensor& t) {
  int64_t bad = -1;
  MG_DISPATCH(t.dtype(), T, {
    const T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i)
      if (!std::isfinite(p[i])) {
        bad = i;
        break;
      }
  });
  return bad;
}

double l2_norm_of(const Tensor& t) {
  double s = 0;
  MG_DISPATCH(t.dtype(), T, {
    const T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) s += double(p[i]) * double(p[i]);
  });
  return std::sqrt(s);
}

}  // namespace memgrad
