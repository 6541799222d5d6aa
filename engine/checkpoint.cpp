#include "engine/checkpoint.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/json_text.hpp"
#include "engine/quote.hpp"

namespace memgrad {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; big-endian hosts need byte swapping here");

const Tensor* TensorFile::find(const std::string& name) const {
  for (const auto& [n, t] : tensors)
    if (n == name) return &t;
  return nullptr;
}

uint64_t fnv1a64(const void* data, size_t size, uint64_t h) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

namespace {

const std::string kChecksumPrefix = "fnv1a64:";
const std::string kMetadataChecksum = kChecksumPrefix + "__metadata__";

std::string hex64(uint64_t h) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

bool is_checksum_key(const std::string& key) { return key.rfind(kChecksumPrefix, 0) == 0; }

// The hash of the metadata entries other than checksums: key, NUL, value, NUL, in key order.
std::string metadata_checksum(const std::map<std::string, std::string>& metadata) {
  uint64_t h = fnv1a64(nullptr, 0);
  const char nul = '\0';
  for (const auto& [key, value] : metadata) {
    if (is_checksum_key(key)) continue;
    h = fnv1a64(key.data(), key.size(), h);
    h = fnv1a64(&nul, 1, h);
    h = fnv1a64(value.data(), value.size(), h);
    h = fnv1a64(&nul, 1, h);
  }
  return hex64(h);
}

// fsync of the folder holding path, so that a rename into it is durable. Filesystems that cannot
// sync a folder say EINVAL (or ENOTSUP); for them the rename is as durable as it gets.
void sync_folder_of(const std::string& path) {
  std::string folder = std::filesystem::path(path).parent_path().string();
  if (folder.empty()) folder = ".";
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY);
  MG_CHECK(fd >= 0, "cannot open folder ", folder, " to sync it: ", std::strerror(errno));
  const bool synced = ::fsync(fd) == 0 || errno == EINVAL || errno == ENOTSUP;
  const std::string why = std::strerror(errno);
  ::close(fd);
  MG_CHECK(synced, "cannot sync folder ", folder, " after replacing ", path, ": ", why);
}

}  // namespace

std::vector<std::string> remove_stale_temporaries(const std::string& path) {
  std::vector<std::string> removed;
  const std::filesystem::path target(path);
  const std::filesystem::path folder =
      target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  const std::string prefix = target.filename().string() + ".tmp.";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || !entry.is_regular_file(ec)) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      continue;  // not a name write_file_atomically makes
    const pid_t pid = pid_t(std::stol(digits));
    // kill(pid, 0) tests for a process without signalling it: EPERM means one exists (another
    // user's); a PID reused by an unrelated process keeps its file until a later start.
    const bool alive = pid != ::getpid() && (::kill(pid, 0) == 0 || errno == EPERM);
    if (alive) continue;
    if (std::filesystem::remove(entry.path(), ec)) removed.push_back(entry.path().string());
  }
  return removed;
}

void write_file_atomically(const std::string& path, const std::string& bytes) {
  // rename() would put a regular file in place of a device (/dev/null), a pipe or a link.
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(path, ec);
  MG_CHECK(!std::filesystem::exists(status) || std::filesystem::is_regular_file(status), path,
           ": exists and is not a regular file (a device, pipe, link or folder); not replaced");
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  MG_CHECK(fd >= 0, "cannot write ", tmp, ": ", std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      fail("cannot write ", tmp, ": ", why);
    }
    done += size_t(n);
  }
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    fail("cannot replace ", path, ": ", why);
  }
  sync_folder_of(path);
}

void save_safetensors(const std::string& path, const TensorFile& file) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  std::map<std::string, std::string> metadata = file.metadata;
  for (const auto& [key, value] : file.metadata)
    MG_CHECK(!is_checksum_key(key), path, ": metadata key '", key, "' is reserved for checksums");
  metadata[kMetadataChecksum] = metadata_checksum(file.metadata);
  for (const auto& [name, t] : file.tensors)
    metadata[kChecksumPrefix + name] = hex64(fnv1a64(t.raw(), t.bytes()));
  header["__metadata__"] = metadata;
  size_t offset = 0;
  for (const auto& [name, t] : file.tensors) {
    MG_CHECK(name != "__metadata__" && !name.empty(), path, ": invalid tensor name '", name, "'");
    MG_CHECK(!header.contains(name), path, ": tensor '", name, "' appears twice");
    std::vector<int64_t> shape(t.shape().dims.begin(), t.shape().dims.begin() + t.rank());
    header[name] = {{"dtype", t.dtype() == DType::f32 ? "F32" : "F64"},
                    {"shape", shape},
                    {"data_offsets", {offset, offset + t.bytes()}}};
    offset += t.bytes();
  }
  std::string json = dump_json(header);
  json.append((8 - json.size() % 8) % 8, ' ');  // pad so the data starts 8-byte aligned
  std::string bytes(8, '\0');
  const uint64_t n = json.size();
  std::memcpy(bytes.data(), &n, 8);
  bytes += json;
  bytes.reserve(bytes.size() + offset);
  for (const auto& [name, t] : file.tensors)
    bytes.append(static_cast<const char*>(t.raw()), t.bytes());
  write_file_atomically(path, bytes);
}

void check_not_directory(const std::string& path) {
  std::error_code ec;
  MG_CHECK(!std::filesystem::is_directory(path, ec), path, ": is a directory, not a file");
}

namespace {

// Checks every tensor and the metadata against `checksums` (none: the file loads unverified).
void verify_checksums(const std::string& path, TensorFile& file,
                      const std::map<std::string, std::string>& checksums) {
  if (checksums.empty()) return;
  auto check = [&](const std::string& key, const std::string& what, const std::string& computed) {
    const auto it = checksums.find(key);
    MG_CHECK(it != checksums.end(), path, ": ", what, " has no checksum '", key,
             "' while the file has others: the file was edited or is corrupt");
    MG_CHECK(it->second == computed, path, ": ", what, " does not match its checksum (", key,
             " is ", it->second, ", the data hash to ", computed, "): the file is corrupt");
  };
  check(kMetadataChecksum, "__metadata__", metadata_checksum(file.metadata));
  for (const auto& [name, t] : file.tensors)
    check(kChecksumPrefix + name, "tensor '" + name + "'", hex64(fnv1a64(t.raw(), t.bytes())));
  for (const auto& [key, value] : checksums)
    MG_CHECK(key == kMetadataChecksum || file.find(key.substr(kChecksumPrefix.size())), path,
             ": checksum '", key,
             "' names no tensor of the file: the file was edited or is corrupt");
  file.checksummed = true;
}

}  // namespace

TensorFile load_safetensors(const std::string& path) {
  check_not_directory(path);
  std::ifstream in(path, std::ios::binary);
  MG_CHECK(in.good(), path, ": cannot open (", std::strerror(errno), ")");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  MG_CHECK(bytes.size() >= 8, path, ": truncated (", bytes.size(),
           " bytes; a safetensors file starts with an 8-byte header length)");
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  MG_CHECK(n <= bytes.size() - 8, path, ": header length ", n, " exceeds the file size ",
           bytes.size(), " (truncated or not a safetensors file)");
  nlohmann::ordered_json header;  // ordered: tensors come back in file order
  try {
    header =
        nlohmann::ordered_json::parse(bytes.begin() + 8, bytes.begin() + 8 + std::ptrdiff_t(n));
  } catch (const nlohmann::json::exception& e) {
    fail(path, ": corrupt header: ", escape(e.what(), 200));
  }
  MG_CHECK(header.is_object(), path, ": corrupt header: not a JSON object");
  const size_t data_start = 8 + n, data_size = bytes.size() - data_start;
  TensorFile file;
  std::map<std::string, std::string> checksums;  // "fnv1a64:..." entries of __metadata__
  std::vector<std::pair<size_t, size_t>> ranges;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const nlohmann::ordered_json& e = it.value();
    if (name == "__metadata__") {
      MG_CHECK(e.is_object(), path, ": __metadata__ must be an object of strings");
      for (auto m = e.begin(); m != e.end(); ++m) {
        MG_CHECK(m.value().is_string(), path, ": __metadata__ value ", quote(m.key()),
                 " is not a string");
        (is_checksum_key(m.key()) ? checksums : file.metadata)[m.key()] =
            m.value().get<std::string>();
      }
      continue;
    }
    MG_CHECK(e.is_object() && e.contains("dtype") && e.contains("shape") &&
                 e.contains("data_offsets") && e["dtype"].is_string() && e["shape"].is_array() &&
                 e["data_offsets"].is_array() && e["data_offsets"].size() == 2,
             path, ": tensor ", quote(name),
             ": entry needs dtype, shape and data_offsets [begin, end]");
    const std::string dt = e["dtype"].get<std::string>();
    MG_CHECK(dt == "F32" || dt == "F64", path, ": tensor ", quote(name), ": unsupported dtype ",
             show(dt), " (memgrad reads F32 and F64)");
    const DType dtype = dt == "F32" ? DType::f32 : DType::f64;
    MG_CHECK(e["shape"].size() <= 4, path, ": tensor ", quote(name), ": rank ", e["shape"].size(),
             " exceeds 4");
    std::vector<int64_t> dims;
    for (const auto& d : e["shape"]) {
      MG_CHECK(d.is_number_integer() && d.get<int64_t>() >= 0, path, ": tensor ", quote(name),
               ": bad dimension ", quote(dump_json(d)));
      dims.push_back(d.get<int64_t>());
    }
    // The element count must fit the data before it is computed: a shape such as [2^32, 2^32,
    // 2^32] overflowed int64 in Shape::numel (found by tests/fuzz/fuzz_safetensors).
    if (std::find(dims.begin(), dims.end(), 0) == dims.end()) {
      uint64_t elements = 1;
      for (int64_t d : dims) {
        MG_CHECK(uint64_t(d) <= data_size / dtype_size(dtype) / elements, path, ": tensor ",
                 quote(name), ": shape ", quote(dump_json(e["shape"])), " needs more than the ",
                 data_size, " data bytes of the file");
        elements *= uint64_t(d);
      }
    }
    const Shape shape = Shape::of(dims.data(), int(dims.size()));
    const auto& off = e["data_offsets"];
    MG_CHECK(off[0].is_number_unsigned() && off[1].is_number_unsigned(), path, ": tensor ",
             quote(name), ": data_offsets must be non-negative integers");
    const size_t begin = off[0].get<size_t>(), end = off[1].get<size_t>();
    MG_CHECK(begin <= end && end <= data_size, path, ": tensor ", quote(name), ": data_offsets [",
             begin, ", ", end, "] outside the ", data_size, " data bytes (truncated file?)");
    MG_CHECK(end - begin == size_t(shape.numel()) * dtype_size(dtype), path, ": tensor ",
             quote(name), ": ", end - begin, " bytes for shape ", shape, " of ", dtype_name(dtype));
    Tensor t = Tensor::empty(shape, dtype);
    std::memcpy(t.raw(), bytes.data() + data_start + begin, end - begin);
    file.tensors.emplace_back(name, std::move(t));
    ranges.emplace_back(begin, end);
  }
  // The data must be covered exactly once: no overlaps, no holes, no trailing bytes.
  std::sort(ranges.begin(), ranges.end());
  size_t expected = 0;
  for (const auto& [b, e] : ranges) {
    MG_CHECK(b == expected, path, ": corrupt data layout (tensors overlap or leave a gap at byte ",
             expected, ")");
    expected = e;
  }
  MG_CHECK(expected == data_size, path, ": ", data_size - expected,
           " trailing bytes after the last tensor (corrupt file)");
  verify_checksums(path, file, checksums);
  return file;
}

void add_parameters(TensorFile& file, const ParameterSet& params, const std::string& prefix) {
  for (size_t i = 0; i < params.size(); ++i)
    file.tensors.emplace_back(prefix + params[i].name, params[i].value);
}

void load_parameters(const TensorFile& file, ParameterSet& params, const std::string& prefix,
                     const std::string& source) {
  std::ostringstream problems;
  for (size_t i = 0; i < params.size(); ++i) {
    Parameter& p = params[i];
    const Tensor* t = file.find(prefix + p.name);
    if (!t) {
      problems << "\n  missing tensor '" << prefix << p.name << "'";
    } else if (t->shape() != p.value.shape()) {
      problems << "\n  tensor '" << prefix << p.name << "' has shape " << t->shape()
               << ", the model expects " << p.value.shape();
    } else if (t->dtype() != p.value.dtype()) {
      problems << "\n  tensor '" << prefix << p.name << "' is " << dtype_name(t->dtype())
               << ", the model expects " << dtype_name(p.value.dtype());
    } else if (const int64_t bad = first_non_finite(*t); bad >= 0) {
      problems << "\n  tensor '" << prefix << p.name << "' holds " << t->at(bad) << " at element "
               << bad << " (a parameter must be finite)";
    }
  }
  for (const auto& [name, t] : file.tensors) {
    if (name.rfind(prefix, 0) != 0) continue;
    if (!params.find(name.substr(prefix.size())))
      problems << "\n  unexpected tensor " << quote(name) << " (no such parameter)";
  }
  const std::string text = problems.str();
  MG_CHECK(text.empty(), source, " does not match the model:", text);
  for (size_t i = 0; i < params.size(); ++i)
    params[i].value.copy_from(*file.find(prefix + params[i].name));
}

}  // namespace memgrad
