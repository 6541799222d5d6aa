// Checkpoints in the safetensors format, so numpy and PyTorch users can open them:
//   8 bytes: little-endian u64 N, the header length
//   N bytes: JSON {"name": {"dtype": "F32"|"F64", "shape": [...], "data_offsets": [begin, end]},
//                  ..., "__metadata__": {"key": "string value", ...}}
//   the raw little-endian data, offsets relative to its start.
// Writes go to a temporary file "<path>.tmp.<pid>" in the same folder, synced, renamed over the
// target, then the folder is synced: a crash never leaves a half-written checkpoint, and a
// checkpoint that was written survives a power loss. Loading validates everything and names what
// is wrong.
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

// Writes `bytes` to path atomically and durably (temporary file, fsync, rename, fsync of the
// folder).
void write_file_atomically(const std::string& path, const std::string& bytes);
// Removes the temporaries "<path>.tmp.<pid>" that write_file_atomically left behind when its
// process was killed: those whose process is gone (or is this one, which is not writing). A
// temporary of a live process is another writer's, still in flight, and is kept (removing it
// would fail that writer's rename); one whose pid was reused by an unrelated process stays until a
// later start. Writers in other PID namespaces (containers sharing the folder) are not seen: keep
// one run directory to one machine's processes. Returns the removed files.
std::vector<std::string> remove_stale_temporaries(const std::string& path);

// Adds every parameter as "<prefix><name>" to file.
void add_parameters(TensorFile& file, const ParameterSet& params, const std::string& prefix = "");
// Copies "<prefix><name>" of file into each parameter. Every parameter must be present with the
// same shape and dtype; an error names each missing, unexpected, or mismatched tensor.
void load_parameters(const TensorFile& file, ParameterSet& params, const std::string& prefix = "",
                     const std::string& source = "checkpoint");

}  // namespace memgrad
