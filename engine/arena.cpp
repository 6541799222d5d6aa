#include "engine/arena.hpp"

#include <algorithm>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#else
#define ASAN_POISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#define ASAN_UNPOISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#endif

namespace memgrad {
namespace {
// Under AddressSanitizer every buffer is followed by a poisoned gap, and memory not taken (or
// given back by rewind) is poisoned, so that an overflow into the next buffer or a use after
// reset() is reported as it was when every buffer was an allocation of its own.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kRedzone = Arena::kAlign;
#else
constexpr size_t kRedzone = 0;
#endif
// A first chunk smaller than this is not worth a second allocation soon after.
constexpr size_t kMinChunk = size_t(64) << 10;
constexpr std::align_val_t kChunkAlign{Arena::kAlign};
}  // namespace

Arena::~Arena() { free_chunks(); }

size_t Arena::capacity() const {
  size_t total = 0;
  for (const Chunk& c : chunks_) total += c.size;
  return total;
}

void Arena::add_chunk(size_t at_least) {
  const size_t size = std::max({at_least, capacity(), kMinChunk});
  // Through operator new, so that the allocation counter (alloc_counter.cpp) sees it.
  chunks_.push_back({static_cast<char*>(::operator new(size, kChunkAlign)), size});
  ASAN_POISON_MEMORY_REGION(chunks_.back().data, size);
  offset_ = 0;
}

void Arena::free_chunks() {
  for (const Chunk& c : chunks_) {
    ASAN_UNPOISON_MEMORY_REGION(c.data, c.size);
    ::operator delete(c.data, kChunkAlign);
  }
  chunks_.clear();
}

Arena::FreeList* Arena::free_list(size_t size, bool add) {
  if (free_.empty()) {
    if (!add) return nullptr;
    free_.assign(kFreeLists, FreeList{0, nullptr});  // once per arena
  }
  // Linear probing from a multiplicative hash of the size in units of kAlign.
  size_t i = size_t((uint64_t(size / kAlign) * 0x9E3779B97F4A7C15ull) >> 40) & (kFreeLists - 1);
  for (size_t probe = 0; probe < kFreeLists; ++probe, i = (i + 1) & (kFreeLists - 1)) {
    if (free_[i].size == size) return &free_[i];
    if (free_[i].size == 0) {
      // Kept at most three quarters full, so that a missing size is found empty soon.
      if (!add || 4 * (free_sizes_ + 1) > 3 * kFreeLists) return nullptr;
      ++free_sizes_;
      free_[i].size = size;
      return &free_[i];
    }
  }
  return nullptr;
}

void Arena::give_back(void* p, size_t bytes) {
  FreeList* list = free_list(rounded(bytes), true);
  if (!list) return;
  // The link lives in the buffer's first bytes; under ASan the rest is poisoned until taken.
  ASAN_POISON_MEMORY_REGION(static_cast<char*>(p) + sizeof(void*), rounded(bytes) - sizeof(void*));
  *static_cast<void**>(p) = list->head;
  list->head = p;
}

void* Arena::take(size_t bytes) {
  const size_t rounded = Arena::rounded(bytes), span = rounded + kRedzone;
  demand_ += span;
  demand_high_water_ = std::max(demand_high_water_, demand_);
  if (free_sizes_ > 0)
    if (FreeList* list = free_list(rounded, false); list && list->head) {
      void* p = list->head;
      list->head = *static_cast<void**>(p);
      ASAN_UNPOISON_MEMORY_REGION(p, rounded);
      return p;
    }
  if (chunks_.empty() || chunks_.back().size - offset_ < span) add_chunk(span);
  void* p = chunks_.back().data + offset_;
  ASAN_UNPOISON_MEMORY_REGION(p, rounded);
  offset_ += span;
  used_ += span;
  high_water_ = std::max(high_water_, used_);
  return p;
}

void Arena::rewind() {
  // Grown as a step without give_back() grows it (at least doubling), so that steps asking for
  // a little more than any before do not allocate each time.
  size_t want = capacity();
  while (want < std::max(demand_high_water_, reserved_)) want = std::max(2 * want, kMinChunk);
  if (chunks_.size() > 1 || want > capacity()) {
    free_chunks();
    add_chunk(want);
  }
  for (const Chunk& c : chunks_) ASAN_POISON_MEMORY_REGION(c.data, c.size);
  for (FreeList& f : free_) f = FreeList{0, nullptr};
  free_sizes_ = 0;
  offset_ = 0;
  used_ = 0;
  demand_ = 0;
}

}  // namespace memgrad
