#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "engine/checkpoint.hpp"
#include "tests/test_util.hpp"

using namespace memgrad;
using memgrad::test::TempDir;
namespace fs = std::filesystem;

namespace {

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
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
  const std::string bytes = read_bytes(path);
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
  const std::string bytes = read_bytes(good);
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
