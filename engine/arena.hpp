// Arena: the memory of one tape step. Buffers are taken from one contiguous chunk by bumping an
// offset and all given back at once by rewind(), so a step allocates nothing on the heap unless it
// needs more bytes in all than the chunk holds: the only thing that matters is the step's total,
// not which node has which shape. (Slots that each kept their own largest buffer did not settle
// when batches of different lengths moved nodes around: dmnc-late kept allocating on 1 step in 7.)
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace memgrad {

class Arena {
 public:
  static constexpr size_t kAlign = 64;  // AVX-512 loads; no two buffers share a cache line

  Arena() = default;
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // `bytes` (rounded up to kAlign) of uninitialised memory, valid until rewind(). When the chunk is
  // full a new one is allocated, at least as large as all before it, so growth is geometric.
  // A buffer given back (give_back) of the same rounded size is taken first.
  void* take(size_t bytes);
  // Gives back a buffer of take(bytes) before rewind(), for the next take of the same rounded size
  // in this step: a backward pass hands over the values and gradients it is done with, so that
  // the gradients it makes next reuse them instead of growing the step's total (free lists by
  // size; a step's buffers come in few sizes). Dropped when the size table is full.
  void give_back(void* p, size_t bytes);
  // What take(bytes) uses of the arena: bytes rounded up to kAlign (at least kAlign).
  static size_t rounded(size_t bytes) {
    return (bytes == 0 ? 1 : (bytes + kAlign - 1) / kAlign) * kAlign;
  }
  // All memory free again. A step that outgrew the chunk leaves several; they become one chunk,
  // large enough for every take() of the largest step so far even without buffers given back
  // (its demand): a later step that reuses fewer still fits in it and allocates nothing. Pages
  // of the chunk that no step wrote are never resident, so the memory in use is the high water.
  // Nothing may point into the arena any more (the tape hands held buffers over first).
  void rewind();
  // Makes the next rewind() leave one chunk of at least `bytes`: headroom for steps that ask for
  // more than any step so far (a batch of many different lengths records more, smaller buffers
  // than the largest batch). Costs address space only until a step writes the pages.
  void reserve(size_t bytes) { reserved_ = std::max(reserved_, bytes); }

  size_t capacity() const;                           // bytes in all chunks
  size_t high_water() const { return high_water_; }  // most bytes written in one step so far
  // Most bytes one step asked for (take() calls, given-back buffers counted again): what the
  // step would have used without give_back().
  size_t demand_high_water() const { return demand_high_water_; }

 private:
  struct Chunk {
    char* data;
    size_t size;
  };
  // A free list: buffers of `size` bytes given back this step, chained through their first bytes.
  struct FreeList {
    size_t size;
    void* head;
  };
  static constexpr size_t kFreeLists = 512;  // open addressing; a power of two
  FreeList* free_list(size_t size, bool add);
  void add_chunk(size_t at_least);
  void free_chunks();
  std::vector<Chunk> chunks_;  // one, except during a step that outgrew it
  size_t offset_ = 0;          // into chunks_.back()
  size_t used_ = 0;            // bytes taken from the chunks since the last rewind
  size_t high_water_ = 0;
  size_t demand_ = 0;  // bytes asked for since the last rewind, given-back buffers included
  size_t demand_high_water_ = 0;
  size_t reserved_ = 0;         // reserve(): the least capacity rewind() leaves
  std::vector<FreeList> free_;  // kFreeLists entries once a buffer was given back, else empty
  size_t free_sizes_ = 0;       // entries in use
};

}  // namespace memgrad
