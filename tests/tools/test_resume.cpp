// Runs that survive: a stop by SIGTERM. Each resume must continue the run exactly or refuse with
// an error naming the file, line or key.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "engine/checkpoint.hpp"
#include "tests/test_util.hpp"
#include "tests/tools/train_util.hpp"
#include "tools/commands.hpp"

using namespace memgrad;
using namespace memgrad::cli;
using namespace memgrad::test;
namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE(
    "SIGTERM (kill, timeout, a job scheduler) saves a checkpoint; the resume continues exactly") {
  TempDir tmp;
  const fs::path run = tmp.path / "run", whole = tmp.path / "whole", err = tmp.path / "stderr";
  // A run far longer than the test, with no checkpoint of its own: only the signal's.
  const Words once = {"--checkpoint-every", "1000000"};
  const pid_t pid = spawn_train(with_words(tiny_run(run, 1000000), once), err);
  // Stopped a few steps in, mid-run, as `timeout` or a scheduler stops it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (line_count(run / "log.jsonl") < 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(::kill(pid, SIGTERM) == 0);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));  // not killed by the signal: it stopped by itself
  CHECK(WEXITSTATUS(status) == 128 + SIGTERM);
  CHECK(read_text(err).find("terminated (SIGTERM): checkpoint saved at step") != std::string::npos);
  REQUIRE(fs::exists(run / "checkpoint.safetensors"));
  const int64_t stopped =
      std::stoll(load_safetensors((run / "checkpoint.safetensors").string()).metadata["next_step"]);
  REQUIRE(stopped >= 3);
  const int end = int(stopped) + 3;
  REQUIRE(cmd_train({"--resume", run.string(), "--iterations", std::to_string(end), "--quiet"}) ==
          0);
  REQUIRE(cmd_train(with_words(tiny_run(whole, end), once)) == 0);
  const std::vector<double> a = logged_losses(whole), b = logged_losses(run);
  REQUIRE(a.size() == size_t(end));
  CHECK(a == b);
}
