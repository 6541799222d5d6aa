// Tensor: a shape (up to 4 dims), a run-time dtype (float32 or float64) and contiguous row-major
// storage. Copies share storage (cheap); clone() is the explicit deep copy.
#pragma once
#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "engine/error.hpp"

namespace memgrad {

enum class DType : uint8_t { f32, f64 };

inline size_t dtype_size(DType t) { return t == DType::f32 ? 4 : 8; }
inline const char* dtype_name(DType t) { return t == DType::f32 ? "float32" : "float64"; }

// Runs `body` with T bound to the C++ element type of `dtype`. Kernels are templates on T; model
// code never is.
#define MG_DISPATCH(dtype, T, ...)          \
  do {                                      \
    if ((dtype) == ::memgrad::DType::f32) { \
      using T = float;                      \
      __VA_ARGS__;                          \
    } else {                                \
      using T = double;                     \
      __VA_ARGS__;                          \
    }                                       \
  } while (0)

struct Shape {
  static constexpr int kMaxRank = 4;
  int rank = 0;
  std::array<int64_t, kMaxRank> dims{};

  Shape() = default;
  Shape(std::initializer_list<int64_t> d);
  static Shape of(const int64_t* d, int rank);

  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= dims[size_t(i)];
    return n;
  }
  // Negative indices count from the end, as in numpy: shape[-1] is the last dim.
  int64_t operator[](int i) const { return dims[i < 0 ? rank + i : i]; }
  int64_t& operator[](int i) { return dims[i < 0 ? rank + i : i]; }
  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }
  std::string str() const;
};
std::ostream& operator<<(std::ostream& out, const Shape& s);

class Arena;

// Aligned raw bytes: a heap buffer of its own, or (made by a tape) memory of the tape's arena that
// the tape points elsewhere each step. Capacity may exceed what the tensor using it needs.
struct Storage {
  explicit Storage(size_t bytes);  // a heap buffer of its own
  Storage() = default;             // no memory yet: a tape slot's, bound to its arena each step
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  void* data = nullptr;
  size_t capacity = 0;
  bool owned = false;  // data is a heap buffer this storage frees
};

class Tensor {
 public:
  Tensor() = default;
  static Tensor empty(const Shape& shape, DType dtype);
  static Tensor zeros(const Shape& shape, DType dtype);
  static Tensor full(const Shape& shape, DType dtype, double value);
  static Tensor from(const Shape& shape, DType dtype, const std::vector<double>& values);
  static Tensor scalar(double value, DType dtype) { return from(Shape{1}, dtype, {value}); }
  // An empty tensor with a storage object of its own but no memory: a tape slot, which
  // bind_to_arena() then points into the tape's arena without allocating.
  static Tensor arena_slot();

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  int64_t numel() const { return shape_.numel(); }
  int rank() const { return shape_.rank; }
  int64_t dim(int i) const { return shape_[i]; }
  size_t bytes() const { return size_t(numel()) * dtype_size(dtype_); }

  void* raw() { return storage_ ? storage_->data : nullptr; }
  const void* raw() const { return storage_ ? storage_->data : nullptr; }
  template <class T>
  T* data() {
    check_type<T>();
    return static_cast<T*>(raw());
  }
  template <class T>
  const T* data() const {
    check_type<T>();
    return static_cast<const T*>(raw());
  }

  // Element access by flat index, converting through double (for tests and tools, not kernels).
  double at(int64_t i) const;
  void set(int64_t i, double v);
  std::vector<double> to_vector() const;

  void fill(double v);
  void zero();
  Tensor clone() const;
  Tensor to(DType dtype) const;
  // Same storage, new shape of the same numel (a view).
  Tensor view(const Shape& shape) const;
  // The first shape.numel() elements (at most numel()) seen as `shape`, sharing storage: the
  // leading rows of a row-major tensor, say.
  Tensor leading(const Shape& shape) const;
  // Copies the elements of src (same numel; dtype converted if needed) into this tensor.
  void copy_from(const Tensor& src);

  // Gives this tensor `shape` and `dtype`, keeping its storage when it is large enough and no one
  // else holds it; otherwise allocates. The tape calls this to reuse memory between steps.
  void reshape_reuse(const Shape& shape, DType dtype);
  // For tape slots: gives this tensor `shape` and `dtype` in memory taken from `arena`, keeping
  // its storage object when no one else holds it (no allocation in a steady-state step).
  void bind_to_arena(Arena& arena, const Shape& shape, DType dtype);
  // For tape slots, before their arena is rewound: if someone besides this tensor still holds its
  // arena memory (a value kept past the step), the holders get a heap copy of their own and this
  // tensor lets go of it; otherwise it keeps its storage object for the next step.
  void release_arena_memory();
  // For tape slots: the arena memory of this tensor's storage and its size in bytes when no one
  // else holds that storage (a view, a copy kept by the caller), else nullptr: memory that its
  // tape may give back to the arena before the step ends.
  void* sole_arena_block(size_t& bytes) const {
    return storage_ && storage_.use_count() == 1 ? arena_block(bytes) : nullptr;
  }
  // The same whoever else holds the storage (the caller has made sure they are done with it).
  void* arena_block(size_t& bytes) const {
    if (!storage_ || storage_->owned || !storage_->data) return nullptr;
    bytes = storage_->capacity;
    return storage_->data;
  }
  long storage_users() const { return storage_.use_count(); }
  bool shares_storage_with(const Tensor& o) const { return storage_ == o.storage_; }

 private:
  template <class T>
  void check_type() const {
    constexpr DType want = sizeof(T) == 4 ? DType::f32 : DType::f64;
    MG_CHECK(dtype_ == want, "tensor of dtype ", dtype_name(dtype_), " accessed as ",
             dtype_name(want));
  }
  std::shared_ptr<Storage> storage_;
  Shape shape_;
  DType dtype_ = DType::f32;
};

// Index of the first NaN or infinite element of t, or -1 when all are finite (anomaly mode,
// checkpoint loading and saving).
int64_t first_non_finite(const Tensor& t);

// sqrt(sum of t's squared elements), summed in double (Tape::print, memgrad inspect).
double l2_norm_of(const Tensor& t);

}  // namespace memgrad
