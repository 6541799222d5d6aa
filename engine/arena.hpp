// Arena: the memory of one tape step. Buffers are taken from one contiguous chunk by bumping an
// offset and all given back at once by rewind(), so a step allocates nothing on the heap unless it
// needs more bytes in all than the chunk holds: the only thing that matters is the step's total,
// not which node has which shape. (Slots that each kept their own largest buffer did not settle
// when batches of different lengths moved nodes around: dmnc-late kept allocating on 1 step in 7.)
#pragma once
#include <cstddef>
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
  void* take(size_t bytes);
  // What take(bytes) uses of the arena: bytes rounded up to kAlign (at least kAlign).
  static size_t rounded(size_t bytes) {
    return (bytes == 0 ? 1 : (bytes + kAlign - 1) / kAlign) * kAlign;
  }
  // All memory free again. A step that outgrew the chunk leaves several; they become one chunk of
  // their summed size, so that the next step as large fits in one. Nothing may point into the
  // arena any more (the tape hands held buffers over to their holders first).
  void rewind();

  size_t capacity() const;                           // bytes in all chunks
  size_t high_water() const { return high_water_; }  // most bytes taken in one step so far

 private:
  struct Chunk {
    char* data;
    size_t size;
  };
  void add_chunk(size_t at_least);
  void free_chunks();
  std::vector<Chunk> chunks_;  // one, except during a step that outgrew it
  size_t offset_ = 0;          // into chunks_.back()
  size_t used_ = 0;            // bytes taken since the last rewind
  size_t high_water_ = 0;
};

}  // namespace memgrad
