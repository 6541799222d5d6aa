// Checkpoints in the safetensors format, so numpy and PyTorch users can open them:
//   8 bytes: little-endian u64 N, the header length
//   N bytes: JSON {"name": {"dtype": "F32"|"F64", "shape": [...], "data_offsets": [begin, end]},
//                  ..., "__metadata__": {"key": "string value", ...}}
//   the raw little-endian data, offsets relative to its start.
// Writes go to a temporary file in the same folder that is renamed over the target, so a crash
// never leaves a half-written checkpoint. Loading validates everything and names what is wrong.
//
// Checksums: memgrad writes into __metadata__ a key "fnv1a64:<tensor name>" for every tensor, the
// 64-bit FNV-1a hash of its data bytes as 16 lowercase hex digits, and "fnv1a64:__metadata__", the
// hash of every other metadata entry (in key order, each as key, NUL, value, NUL). Keyed by name,
// they catch a flipped bit and two same-size tensors swapped. A file with none (written by
// another program or an older memgrad) loads unverified (TensorFile::checksummed false); a file
// with some is verified in full, and any mismatch or missing one is an error.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/parameter.hpp"
#include "engine/tensor.hpp"

namespace memgrad {

struct TensorFile {
  std::vector<std::pair<std::string, Tensor>> tensors;  // in file order
  std::map<std::string, std::string> metadata;          // without the checksum entries
  bool checksummed = false;  // loaded: every tensor and the metadata matched their checksums
  const Tensor* find(const std::string& name) const;
};

// FNV-1a, 64 bits: h = (h xor byte) * 0x100000001b3 over the bytes, from 0xcbf29ce484222325.
uint64_t fnv1a64(const void* data, size_t size, uint64_t h = 0xcbf29ce484222325ULL);

void save_safetensors(const std::string& path, const TensorFile& file);
TensorFile load_safetensors(const std::string& path);

// An Error "<path>: is a directory, not a file" when it is one (an ifstream would open it and
// read nothing, and the reader would then blame the file's contents).
void check_not_directory(const std::string& path);

// Writes `bytes` to path atomically (temporary file + fsync + rename).
void write_file_atomically(const std::string& path, const std::string& bytes);

// Adds every parameter as "<prefix><name>" to file.
void add_parameters(TensorFile& file, const ParameterSet& params, const std::string& prefix = "");
// Copies "<prefix><name>" of file into each parameter. Every parameter must be present with the
// same shape and dtype; an error names each missing, unexpected, or mismatched tensor.
void load_parameters(const TensorFile& file, ParameterSet& params, const std::string& prefix = "",
                     const std::string& source = "checkpoint");

}  // namespace memgrad
