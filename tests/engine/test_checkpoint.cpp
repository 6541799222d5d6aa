#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "engine/checkpoint.hpp"
#include "tests/test_util.hpp"

using namespace memgrad;
using memgrad::test::TempDir;
namespace fs = std::filesystem;

namespace {

void write_bytes(const fs::path& p, const std::string& b) {
  std::ofstream out(p, std::ios::binary);
  out << b;
}

TensorFile sample_file() {
  TensorFile f;
  f.tensors.emplace_back("w", Tensor::from(Shape{2, 3}, DType::f32, {1, 2, 3, 4, 5, 6}));
  f.tensors.emplace_back("b", Tensor::from(Shape{3}, DType::f64, {0.5, -0.25, 1e-300}));
  f.metadata["step"] = "17";
  return f;
}

}  // namespace

TEST_CASE("safetensors round trip keeps names, shapes, dtypes, values and metadata") {
  TempDir dir;
  const std::string path = (dir.path / "ckpt.safetensors").string();
  save_safetensors(path, sample_file());
  const TensorFile back = load_safetensors(path);
  REQUIRE(back.tensors.size() == 2);
  CHECK(back.tensors[0].first == "w");
  CHECK(back.tensors[0].second.shape() == Shape{2, 3});
  CHECK(back.tensors[0].second.dtype() == DType::f32);
  CHECK(back.tensors[0].second.to_vector() == std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK(back.tensors[1].second.dtype() == DType::f64);
  CHECK(back.tensors[1].second.at(2) == 1e-300);
  CHECK(back.metadata.at("step") == "17");
  // Layout: 8-byte little-endian header length, then JSON, data 8-byte aligned.
  const std::string bytes = test::read_text(path);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  CHECK(n % 8 == 0);
  CHECK(bytes[8] == '{');
  CHECK(bytes.size() == 8 + n + 6 * 4 + 3 * 8);
  // Atomic write leaves no temporary file behind.
  int files = 0;
  for (auto& e : fs::directory_iterator(dir.path)) files += e.is_regular_file();
  CHECK(files == 1);
}

TEST_CASE("corrupt or truncated safetensors files are rejected with a clear message") {
  TempDir dir;
  const fs::path good = dir.path / "good.safetensors";
  save_safetensors(good.string(), sample_file());
  const std::string bytes = test::read_text(good);
  const fs::path bad = dir.path / "bad.safetensors";
  auto load_bad = [&](const std::string& b) {
    write_bytes(bad, b);
    return load_safetensors(bad.string());
  };
  CHECK_THROWS_WITH_AS(load_bad(bytes.substr(0, 5)), doctest::Contains("truncated"), Error);
  CHECK_THROWS_WITH_AS(load_bad(bytes.substr(0, bytes.size() - 4)),
                       doctest::Contains("outside the"), Error);
  CHECK_THROWS_WITH_AS(load_bad(bytes + "xx"), doctest::Contains("trailing bytes"), Error);
  std::string huge = bytes;
  huge[6] = '\x7f';  // header length far beyond the file
  CHECK_THROWS_WITH_AS(load_bad(huge), doctest::Contains("exceeds the file size"), Error);
  std::string garbled = bytes;
  garbled[9] = '#';
  CHECK_THROWS_WITH_AS(load_bad(garbled), doctest::Contains("corrupt header"), Error);
  std::string dtype = bytes;
  dtype.replace(dtype.find("F64"), 3, "I64");
  CHECK_THROWS_WITH_AS(load_bad(dtype), doctest::Contains("unsupported dtype I64"), Error);
  CHECK_THROWS_WITH_AS(load_safetensors((dir.path / "missing").string()),
                       doctest::Contains("cannot open"), Error);
  CHECK_THROWS_WITH_AS(save_safetensors((dir.path / "no-such-dir" / "x").string(), sample_file()),
                       doctest::Contains("cannot write"), Error);
}

TEST_CASE("loading parameters checks names, shapes and dtypes") {
  TempDir dir;
  const std::string path = (dir.path / "p.safetensors").string();
  ParameterSet params(DType::f32);
  params.add("lstm.W", Shape{2, 3}).value.fill(1.5);
  params.add("lstm.b", Shape{3}).value.fill(-2.0);
  TensorFile f;
  add_parameters(f, params, "param/");
  save_safetensors(path, f);

  ParameterSet same(DType::f32);
  same.add("lstm.W", Shape{2, 3});
  same.add("lstm.b", Shape{3});
  load_parameters(load_safetensors(path), same, "param/", path);
  CHECK(same.get("lstm.W").value.at(5) == 1.5);
  CHECK(same.get("lstm.b").value.at(0) == -2.0);

  ParameterSet other_shape(DType::f32);
  other_shape.add("lstm.W", Shape{3, 2});
  other_shape.add("lstm.b", Shape{3});
  CHECK_THROWS_WITH_AS(load_parameters(load_safetensors(path), other_shape, "param/", path),
                       doctest::Contains("'param/lstm.W' has shape [2,3], the model expects [3,2]"),
                       Error);
  ParameterSet renamed(DType::f32);
  renamed.add("lstm.W", Shape{2, 3});
  renamed.add("lstm.bias", Shape{3});
  auto load_renamed = [&] { load_parameters(load_safetensors(path), renamed, "param/", path); };
  CHECK_THROWS_WITH_AS(load_renamed(), doctest::Contains("missing tensor 'param/lstm.bias'"),
                       Error);
  CHECK_THROWS_WITH_AS(load_renamed(), doctest::Contains("unexpected tensor 'param/lstm.b'"),
                       Error);
  ParameterSet wrong_dtype(DType::f64);
  wrong_dtype.add("lstm.W", Shape{2, 3});
  wrong_dtype.add("lstm.b", Shape{3});
  CHECK_THROWS_WITH_AS(load_parameters(load_safetensors(path), wrong_dtype, "param/", path),
                       doctest::Contains("is float32, the model expects float64"), Error);
}

TEST_CASE(
    "checksums: a flipped bit, two swapped same-size tensors or edited metadata are refused") {
  TempDir dir;
  TensorFile f;
  f.tensors.emplace_back("a", Tensor::from(Shape{2}, DType::f64, {1.0, 2.0}));
  f.tensors.emplace_back("b", Tensor::from(Shape{2}, DType::f64, {3.0, 4.0}));
  f.metadata["step"] = "17";
  const fs::path good = dir.path / "good.safetensors", bad = dir.path / "bad.safetensors";
  save_safetensors(good.string(), f);
  const TensorFile back = load_safetensors(good.string());
  CHECK(back.checksummed);
  CHECK(back.metadata.size() == 1);  // the checksum entries are not the caller's metadata
  // FNV-1a of a's 16 bytes, in the header as 16 hex digits.
  char want[17];
  std::snprintf(want, sizeof want, "%016llx",
                static_cast<unsigned long long>(fnv1a64(f.tensors[0].second.raw(), 16)));
  const std::string bytes = test::read_text(good);
  CHECK(bytes.find(std::string("\"fnv1a64:a\":\"") + want + "\"") != std::string::npos);
  CHECK(fnv1a64("a", 1) == 0xaf63dc4c8601ec8cULL);  // the published FNV-1a 64 test vector

  auto load_bad = [&](const std::string& b) {
    write_bytes(bad, b);
    return load_safetensors(bad.string());
  };
  const size_t data = bytes.size() - 32;  // a's bytes, then b's
  std::string flipped = bytes;
  flipped[data + 3] = char(flipped[data + 3] ^ 0x01);
  CHECK_THROWS_WITH_AS(load_bad(flipped),
                       doctest::Contains("tensor 'a' does not match its checksum (fnv1a64:a is "),
                       Error);
  std::string swapped =
      bytes.substr(0, data) + bytes.substr(data + 16, 16) + bytes.substr(data, 16);
  CHECK_THROWS_WITH_AS(load_bad(swapped), doctest::Contains("does not match its checksum"), Error);
  std::string edited = bytes;
  edited.replace(edited.find("\"17\""), 4, "\"15\"");
  CHECK_THROWS_WITH_AS(load_bad(edited),
                       doctest::Contains("__metadata__ does not match its checksum"), Error);
  // One checksum renamed away: the tensor has none, and the key names no tensor.
  std::string renamed = bytes;
  renamed.replace(renamed.find("\"fnv1a64:b\""), 11, "\"fnv1a64:c\"");
  CHECK_THROWS_WITH_AS(load_bad(renamed), doctest::Contains("tensor 'b' has no checksum"), Error);
  // A file without any (another program's, an older memgrad's) loads, unverified: here the
  // checksum keys renamed (same length) into ordinary metadata.
  std::string none = bytes;
  for (size_t at = none.find("\"fnv1a64:"); at != std::string::npos; at = none.find("\"fnv1a64:"))
    none[at + 1] = 'x';
  const TensorFile unverified = load_bad(none);
  CHECK_FALSE(unverified.checksummed);
  CHECK(unverified.find("b")->at(1) == 4.0);
  TensorFile reserved = f;
  reserved.metadata["fnv1a64:a"] = "0";
  CHECK_THROWS_WITH_AS(save_safetensors(bad.string(), reserved),
                       doctest::Contains("metadata key 'fnv1a64:a' is reserved"), Error);
}

TEST_CASE("stale temporaries: a dead writer's are removed, a live one's and others' kept") {
  TempDir dir;
  const std::string target = (dir.path / "ckpt.safetensors").string();
  // A pid that no process has: 2^22 + 1 is above Linux's largest pid_max.
  const std::string dead = target + ".tmp.4194305",
                    live = target + ".tmp." + std::to_string(::getppid());
  const std::string own = target + ".tmp." + std::to_string(::getpid());
  const std::string other = (dir.path / "other.tmp.4194305").string(),
                    not_pid = target + ".tmp.12x";
  for (const std::string& p : {dead, live, own, other, not_pid}) write_bytes(p, "partial");
  std::vector<std::string> removed = remove_stale_temporaries(target);
  std::sort(removed.begin(), removed.end());
  std::vector<std::string> want = {dead, own};
  std::sort(want.begin(), want.end());
  CHECK(removed == want);
  for (const std::string& p : {live, other, not_pid}) CHECK(fs::exists(p));
}
