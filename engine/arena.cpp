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

void* Arena::take(size_t bytes) {
  const size_t rounded = Arena::rounded(bytes), span = rounded + kRedzone;
  if (chunks_.empty() || chunks_.back().size - offset_ < span) add_chunk(span);
  void* p = chunks_.back().data + offset_;
  ASAN_UNPOISON_MEMORY_REGION(p, rounded);
  offset_ += span;
  used_ += span;
  high_water_ = std::max(high_water_, used_);
  return p;
}

void Arena::rewind() {
  if (chunks_.size() > 1) {
    const size_t total = capacity();
    free_chunks();
    add_chunk(total);
  }
  for (const Chunk& c : chunks_) ASAN_POISON_MEMORY_REGION(c.data, c.size);
  offset_ = 0;
  used_ = 0;
}

}  // namespace memgrad
