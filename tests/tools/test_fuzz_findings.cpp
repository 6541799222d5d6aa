// Regression tests of what the libFuzzer targets (tests/fuzz, tools/fuzz.sh) found in the
// parsers: each input here once crashed, overflowed, or escaped as an exception that is not
// memgrad's bad-input Error. docs/fuzzing.md lists them.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/checkpoint.hpp"
#include "engine/error.hpp"
#include "engine/json_text.hpp"
#include "tasks/physionet_record.hpp"
#include "tests/test_util.hpp"
#include "tools/run_dir.hpp"
#include "tools/trainer.hpp"

using namespace memgrad;
using memgrad::test::error_of;
using memgrad::test::TempDir;

namespace {

// A safetensors file: the 8-byte header length, the header, the data.
std::string safetensors(const nlohmann::json& header, const std::string& data = "") {
  const std::string json = dump_json(header);
  const uint64_t n = json.size();
  std::string bytes(8, '\0');
  std::memcpy(bytes.data(), &n, 8);
  return bytes + json + data;
}

#define CHECK_HAS(text, part)                                    \
  do {                                                           \
    const std::string text_ = (text);                            \
    CHECK_MESSAGE(text_.find(part) != std::string::npos, text_); \
  } while (0)

}  // namespace

TEST_CASE("fuzz finding: a safetensors shape whose element count overflows int64") {
  // fuzz_safetensors: UBSan "signed integer overflow: 4294967296 * 4294967296" in Shape::numel.
  TempDir dir;
  const auto shape = nlohmann::json::array({4294967296LL, 4294967296LL, 4294967296LL});
  const std::string path =
      dir.write("big.safetensors",
                safetensors({{"w", {{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {0, 8}}}}},
                            std::string(8, '\0')));
  CHECK(error_of([&] { load_safetensors(path); }) ==
        path +
            ": tensor 'w': shape '[4294967296,4294967296,4294967296]' needs more than the 8 data "
            "bytes of the file");
  const std::string wide = dir.write(
      "wide.safetensors",
      safetensors(
          {{"w", {{"dtype", "F64"}, {"shape", {INT64_MAX, 2}}, {"data_offsets", {0, 0}}}}}));
  CHECK_HAS(error_of([&] { load_safetensors(wide); }), "needs more than the 0 data bytes");
  // An empty tensor with huge other dimensions is still fine.
  const std::string empty = dir.write(
      "empty.safetensors",
      safetensors(
          {{"w",
            {{"dtype", "F32"}, {"shape", {INT64_MAX, 0, INT64_MAX}}, {"data_offsets", {0, 0}}}}}));
  CHECK(load_safetensors(empty).tensors.at(0).second.numel() == 0);
}

TEST_CASE("fuzz finding: a log.jsonl step that is not a whole number") {
  // fuzz_run_log: {"step":"x"} escaped the log reader as nlohmann's type_error (no file, no
  // line); {"step":1e300} overflowed the conversion to int64 (UBSan).
  TempDir dir;
  const cli::RunDir run{dir.path.string()};
  auto resume = [&](const std::string& text) {
    std::ofstream(run.log()) << text;
    std::vector<std::string> notes;
    return error_of([&] { run.resume_log(2, /*lines=*/-1, notes); });
  };
  const std::string bad = ": not a log line (a JSON object with a whole-number \"step\"): ";
  CHECK(resume("{\"step\":0}\n{\"step\":\"x\"}\n") ==
        run.log() + ":2" + bad + "'{\"step\":\"x\"}'");
  CHECK(resume("{\"step\":1e300}\n") == run.log() + ":1" + bad + "'{\"step\":1e300}'");
  CHECK(resume("[1,2]\n") == run.log() + ":1" + bad + "'[1,2]'");
  CHECK(resume("{\"step\":18446744073709551615}\n") ==
        run.log() + ":1" + bad + "'{\"step\":18446744073709551615}'");
  // Whole steps are compared as numbers: the lines before step 2 are kept.
  CHECK(resume("{\"step\":-1}\n{\"step\":1}\n{\"step\":2}\n") == "(no error)");
  CHECK(test::read_text(run.log()) == "{\"step\":-1}\n{\"step\":1}\n");
}

TEST_CASE("fuzz finding: config.json naming an unknown task or model") {
  // fuzz_run_config: RunConfig::from_json let the registries' UsageError through: the message
  // named neither the file nor quoted the name ("unknown task 's[m2seq'").
  const nlohmann::json none = nlohmann::json::object();
  const nlohmann::json j = {{"task", "s\x1bm2seq"}, {"model", "lstm"}, {"task_settings", none},
                            {"model_config", none}, {"train", none},   {"seed", 1},
                            {"dtype", "float32"}};
  CHECK_HAS(error_of([&] { cli::RunConfig::from_json(j, "run/config.json"); }),
            "run/config.json: unknown task 's\\x1bm2seq' (known:");
  nlohmann::json m = j;
  m["task"] = "sum2seq";
  m["model"] = std::string(1000, 'm');
  CHECK_HAS(error_of([&] { cli::RunConfig::from_json(m, "run/config.json"); }),
            "run/config.json: unknown model '" + std::string(60, 'm') + "...' (1000 bytes)");
}

TEST_CASE("fuzz finding: a PhysioNet RecordID too large for int64") {
  // fuzz_physionet_record: read_outcomes converted 1.3e61 to int64 (UBSan: outside the range of
  // representable values); parse_record did the same with a RecordID line.
  TempDir dir;
  const std::string id = "132546" + std::string(56, '0');  // 1.3e61
  const std::string outcomes = dir.write(
      "Outcomes-a.txt",
      "RecordID,SAPS-I,SOFA,Length_of_stay,Survival,In-hospital_death\n" + id + ",6,1,5,-1,0\n");
  CHECK(error_of([&] { memgrad::physionet::read_outcomes(outcomes); }) ==
        outcomes + ":2: RecordID '" + id.substr(0, 60) +
            "...' (62 bytes) is not a positive whole number");
  memgrad::physionet::Quirks quirks;
  CHECK_HAS(error_of([&] {
              memgrad::physionet::parse_record("Time,Parameter,Value\n00:00,RecordID,1e61\n",
                                               "r.txt", 0, quirks);
            }),
            "r.txt:2: RecordID '1e61' is not a positive whole number");
  // The largest RecordID a double holds exactly still reads.
  CHECK(memgrad::physionet::parse_record("Time,Parameter,Value\n00:00,RecordID,9007199254740992\n",
                                         "r.txt", 0, quirks)
            .id == 9007199254740992LL);
}
