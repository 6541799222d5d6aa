// Runs that survive: a stop by SIGTERM, a torn log line, intervals that do not divide each other,
// an edited or corrupt checkpoint, temporaries of killed writes. Each resume must continue the
// run exactly or refuse with an error naming the file, line or key.
#include <doctest/doctest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>
#include <tuple>

#include "engine/checkpoint.hpp"
#include "engine/error.hpp"
#include "engine/json_text.hpp"
#include "tests/tasks/physionet_fixture.hpp"
#include "tests/test_util.hpp"
#include "tests/tools/train_util.hpp"
#include "tools/args.hpp"
#include "tools/commands.hpp"
#include "tools/run_dir.hpp"

using namespace memgrad;
using namespace memgrad::cli;
using namespace memgrad::test;
namespace fs = std::filesystem;

namespace {

void append_text(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary | std::ios::app) << text;
}

// What `fn` printed on stderr (the notes and warnings of train).
template <class Fn>
std::string stderr_of(Fn fn) {
  TempDir tmp;
  const std::string path = (tmp.path / "stderr").string();
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  std::FILE* file = std::fopen(path.c_str(), "w");
  REQUIRE(file != nullptr);
  ::dup2(::fileno(file), STDERR_FILENO);
  try {
    fn();
  } catch (...) {
    std::fflush(stderr);
    ::dup2(saved, STDERR_FILENO);
    ::close(saved);
    std::fclose(file);
    throw;
  }
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::fclose(file);
  return test::read_text(path);
}

// A pid no process has: a child that has exited and been reaped.
pid_t dead_pid() {
  char arg0[] = "true";
  char* argv[] = {arg0, nullptr};
  pid_t pid = 0;
  REQUIRE(posix_spawnp(&pid, "true", nullptr, nullptr, argv, environ) == 0);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return pid;
}

// Rewrites a safetensors file without its checksum entries, as a memgrad before them wrote it.
void strip_checksums(const fs::path& path) {
  const std::string bytes = test::read_text(path);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  auto header = nlohmann::ordered_json::parse(bytes.substr(8, n));
  nlohmann::ordered_json metadata = nlohmann::ordered_json::object();
  for (auto& [key, value] : header["__metadata__"].items())
    if (key.rfind("fnv1a64:", 0) != 0) metadata[key] = value;
  header["__metadata__"] = metadata;
  std::string json = dump_json(header);
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  const uint64_t m = json.size();
  std::memcpy(out.data(), &m, 8);
  std::ofstream(path, std::ios::binary) << out << json << bytes.substr(8 + n);
}

// A checkpoint's metadata edited through the API (so its checksums are recomputed: what is tested
// is the metadata check, not the checksum).
void edit_metadata(const fs::path& checkpoint, const std::string& key, const std::string& value) {
  TensorFile file = load_safetensors(checkpoint.string());
  file.metadata[key] = value;
  save_safetensors(checkpoint.string(), file);
}

// The words of a tiny bAbI run (a task with epochs: its log has epoch lines).
Words babi_run(const TempDir& tmp, const fs::path& out, int iterations) {
  const fs::path data = write_babi_qa1(tmp, "data");
  return {"--task",          "babi",
          "--model",         "memn2n",
          "--data",          data.string(),
          "--memory-size",   "2",
          "--embedding-dim", "4",
          "--batch",         "2",
          "--iterations",    std::to_string(iterations),
          "--threads",       "1",
          "--quiet",         "--out",
          out.string()};
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
  CHECK(test::read_text(err).find("terminated (SIGTERM): checkpoint saved at step") !=
        std::string::npos);
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

TEST_CASE("a resumed run's log is the uninterrupted run's, line for line, for any intervals") {
  // Log every 3, checkpoint every 5, evaluate every 4 (sum2seq) or an epoch of 4 steps (bAbI):
  // no interval divides another. The split run stops at 7 and at 11 (off every interval) and ends
  // at 15 with the uninterrupted run. Compared: every field of every line but steps_per_s, the
  // one wall-time field.
  TempDir tmp;
  const Words intervals = {"--log-every", "3", "--checkpoint-every", "5"};
  auto sum2seq = [&](const fs::path& out, int iterations) {
    return with_words(tiny_run(out, iterations),
                      {"--log-every", "3", "--checkpoint-every", "5", "--eval-every", "4"});
  };
  auto babi = [&](const fs::path& out, int iterations) {
    return with_words(babi_run(tmp, out, iterations), intervals);
  };
  for (const auto& make : {std::function<Words(const fs::path&, int)>(sum2seq),
                           std::function<Words(const fs::path&, int)>(babi)}) {
    const fs::path whole = tmp.path / "whole", split = tmp.path / "split";
    fs::remove_all(whole);
    fs::remove_all(split);
    REQUIRE(cmd_train(make(whole, 15)) == 0);
    REQUIRE(cmd_train(make(split, 7)) == 0);
    for (const char* end : {"11", "15"})
      REQUIRE(cmd_train({"--resume", split.string(), "--iterations", end, "--quiet"}) == 0);
    const std::vector<nlohmann::json> a = log_without_wall_time(whole),
                                      b = log_without_wall_time(split);
    const std::string task = make(whole, 1)[1];
    CAPTURE(task);
    // Lines at steps 3, 6, 9, 12 and the last step 15, each of them a loss line, plus the task's
    // eval (4, 8, 12, 15) or epoch lines.
    int loss_lines = 0, other_lines = 0;
    for (const auto& line : a) (line.contains("loss_mean") ? loss_lines : other_lines) += 1;
    CHECK(loss_lines == 5);
    CHECK(other_lines >= 3);
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      CAPTURE(i);
      CHECK(dump_json(a[i]) == dump_json(b[i]));
    }
    CHECK(test::read_text(whole / "metrics.json") == test::read_text(split / "metrics.json"));
  }
}

TEST_CASE("a torn last log line is dropped with a note; any other bad line is an error") {
  TempDir tmp;
  const fs::path whole = tmp.path / "whole", run = tmp.path / "run";
  REQUIRE(cmd_train(tiny_run(whole, 4)) == 0);
  REQUIRE(cmd_train(tiny_run(run, 2)) == 0);
  // A kill or power loss in the middle of writing the next line.
  const std::string good_log = test::read_text(run / "log.jsonl");
  append_text(run / "log.jsonl", "{\"step\":2,\"loss\":1.2");
  const std::string note = stderr_of([&] {
    REQUIRE(cmd_train({"--resume", run.string(), "--iterations", "4", "--quiet"}) == 0);
  });
  CHECK(note.find("log.jsonl:3: dropped a torn last line '{\"step\":2,\"loss\":1.2'") !=
        std::string::npos);
  CHECK(logged_losses(run) == logged_losses(whole));

  // Power loss can also leave zeros where the line was.
  RunDir dir{run.string()};
  std::ofstream(dir.log(), std::ios::binary) << good_log << std::string(5, '\0');
  std::vector<std::string> notes;
  CHECK(dir.resume_log(2, 2, notes) == 2);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find(":3: dropped a torn last line '\\x00\\x00\\x00\\x00\\x00'") !=
        std::string::npos);
  CHECK(test::read_text(dir.log()) == good_log);

  // Not torn: a bad line followed by others, a complete bad last line, a line without a step.
  const std::pair<std::string, const char*> bad[] = {
      {"garbage\n" + good_log, "log.jsonl:1: not a log line"},
      {good_log + "{\"step\":2}garbage\n", "log.jsonl:3: not a log line"},
      {good_log + "{\"loss\":1}\n", "log.jsonl:3: not a log line"},
      {good_log + "{\"step\":\"2\"}\n", "log.jsonl:3: not a log line"},
  };
  for (const auto& [text, message] : bad) {
    CAPTURE(message);
    std::ofstream(dir.log(), std::ios::binary) << text;
    CHECK_THROWS_WITH_AS(cmd_train({"--resume", run.string(), "--iterations", "4", "--quiet"}),
                         doctest::Contains(message), Error);
    CHECK(test::read_text(dir.log()) == text);  // left as it was
  }
}

TEST_CASE("checkpoint metadata is parsed strictly, its format checked, its run settings compared") {
  TempDir tmp;
  const fs::path run = tmp.path / "run";
  REQUIRE(cmd_train(tiny_run(run, 2)) == 0);
  const fs::path checkpoint = run / "checkpoint.safetensors";
  const std::string good = test::read_text(checkpoint);
  auto restore = [&] { std::ofstream(checkpoint, std::ios::binary) << good; };
  auto resume = [&] {
    return cmd_train({"--resume", run.string(), "--iterations", "3", "--quiet"});
  };
  const std::pair<std::pair<const char*, const char*>, const char*> cases[] = {
      {{"next_step", "2abc"},
       "checkpoint metadata 'next_step' must be a whole number >= 0, got "
       "'2abc'"},
      {{"next_step", " 2"}, "'next_step' must be a whole number >= 0, got ' 2'"},
      {{"next_step", "-5"}, "'next_step' must be a whole number >= 0, got '-5'"},
      {{"next_step", "1"}, "'next_step' (1) and 'optimizer_steps' (2) disagree"},
      {{"optimizer_steps", "2.0"}, "'optimizer_steps' must be a whole number >= 0, got '2.0'"},
      {{"loss_sum", "1e999"}, "'loss_sum' must be a finite number, got '1e999'"},
      {{"log_lines", "two"}, "'log_lines' must be a whole number >= 0, got 'two'"},
      {{"model_state", "{"}, "checkpoint metadata 'model_state' is not valid JSON"},
      {{"best_epoch", "{"}, "checkpoint metadata 'best_epoch' is not valid JSON"},
      {{"format", "memgrad-checkpoint-9"},
       "checkpoint metadata 'format' is 'memgrad-checkpoint-9', not a memgrad checkpoint"},
  };
  for (const auto& [edit, message] : cases) {
    CAPTURE(message);
    edit_metadata(checkpoint, edit.first, edit.second);
    CHECK_THROWS_WITH_AS(resume(), doctest::Contains(message), Error);
    restore();
  }
  TensorFile file = load_safetensors(checkpoint.string());
  file.metadata.erase("format");
  save_safetensors(checkpoint.string(), file);
  CHECK_THROWS_WITH_AS(resume(), doctest::Contains("'format' is '', not a memgrad checkpoint"),
                       Error);
  CHECK_THROWS_WITH_AS(cmd_eval({"--checkpoint", run.string()}),
                       doctest::Contains("'format' is '', not a memgrad checkpoint"), Error);
  restore();

  // config.json edited after the checkpoint: another run than the one the checkpoint saved.
  const fs::path config = run / "config.json";
  const std::string good_config = test::read_text(config);
  for (const auto& [group, key, value] : {std::tuple{"train", "lr", nlohmann::json(0.005)},
                                          std::tuple{"model_config", "hidden", nlohmann::json(7)},
                                          std::tuple{"task_settings", "lmax", nlohmann::json(3)}}) {
    nlohmann::json j = parse_json(good_config);
    const nlohmann::json was = j[group][key];
    j[group][key] = value;
    std::ofstream(config) << dump_json(j, 2);
    const std::string message = std::string("run setting '") + group + "." + key + "' is " +
                                dump_json(was) + " in the checkpoint but " + dump_json(value) +
                                " in the run's config.json";
    CAPTURE(message);
    CHECK_THROWS_WITH_AS(resume(), doctest::Contains(message.c_str()), Error);
    std::ofstream(config) << good_config;
  }
  nlohmann::json j = parse_json(good_config);
  j["seed"] = 6;
  std::ofstream(config) << dump_json(j, 2);
  CHECK_THROWS_WITH_AS(resume(), doctest::Contains("run setting 'seed' is 5 in the checkpoint"),
                       Error);
  std::ofstream(config) << good_config;
  // Its length may change (the resume's --iterations): it does here.
  CHECK(resume() == 0);
}

TEST_CASE(
    "checkpoint checksums: a flipped bit or a swap fails; a format-1 file loads with a warning") {
  TempDir tmp;
  const fs::path run = tmp.path / "run";
  REQUIRE(cmd_train(tiny_run(run, 2)) == 0);
  const fs::path checkpoint = run / "checkpoint.safetensors";
  const std::string good = test::read_text(checkpoint);
  auto resume = [&] {
    return cmd_train({"--resume", run.string(), "--iterations", "3", "--quiet"});
  };
  // A flipped bit in the last byte of the data (a parameter or optimizer state).
  std::string flipped = good;
  flipped.back() = char(flipped.back() ^ 0x10);
  std::ofstream(checkpoint, std::ios::binary) << flipped;
  CHECK_THROWS_WITH_AS(resume(), doctest::Contains("does not match its checksum"), Error);
  CHECK_THROWS_WITH_AS(cmd_eval({"--checkpoint", run.string()}),
                       doctest::Contains("does not match its checksum"), Error);

  // A checksum-less file: refused as format 2 (its checksums were removed), loaded with a warning
  // as format 1 (written before they existed).
  std::ofstream(checkpoint, std::ios::binary) << good;
  strip_checksums(checkpoint);
  CHECK_THROWS_WITH_AS(resume(), doctest::Contains("without its tensor checksums"), Error);
  {
    std::ofstream(checkpoint, std::ios::binary) << good;
    TensorFile file = load_safetensors(checkpoint.string());
    file.metadata["format"] = "memgrad-checkpoint-1";
    for (const char* key : {"log_lines", "loss_sum", "loss_count", "best_epoch"})
      file.metadata.erase(key);
    save_safetensors(checkpoint.string(), file);
    strip_checksums(checkpoint);
  }
  const std::string warning = stderr_of([&] { CHECK(resume() == 0); });
  CHECK(warning.find("is a memgrad-checkpoint-1 checkpoint, written before checksums: loaded "
                     "unverified") != std::string::npos);
  // The resumed run wrote a checkpoint of the current format, with checksums.
  const TensorFile now = load_safetensors(checkpoint.string());
  CHECK(now.checksummed);
  CHECK(now.metadata.at("format") == "memgrad-checkpoint-2");
  CHECK(logged_losses(run).size() == 3);
}

TEST_CASE("temporaries of killed writes are removed at the next start, a live writer's kept") {
  TempDir tmp;
  const fs::path run = tmp.path / "run";
  REQUIRE(cmd_train(tiny_run(run, 2)) == 0);
  const std::string dead = std::to_string(dead_pid()), live = std::to_string(::getppid());
  const fs::path stale[] = {run / ("checkpoint.safetensors.tmp." + dead),
                            run / ("log.jsonl.tmp." + dead), run / ("metrics.json.tmp." + dead),
                            run / ("config.json.tmp." + std::to_string(::getpid()))};
  const fs::path kept[] = {run / ("checkpoint.safetensors.tmp." + live),  // another writer
                           run / "checkpoint.safetensors.tmp.x1",         // not a pid
                           run / ("notes.txt.tmp." + dead)};              // not memgrad's
  for (const fs::path& p : stale) std::ofstream(p) << "partial";
  for (const fs::path& p : kept) std::ofstream(p) << "partial";
  const std::string notes = stderr_of([&] {
    REQUIRE(cmd_train({"--resume", run.string(), "--iterations", "3", "--quiet"}) == 0);
  });
  for (const fs::path& p : stale) {
    CAPTURE(p);
    CHECK_FALSE(fs::exists(p));
    CHECK(notes.find("removed " + p.string() + ", left by a write whose process was killed") !=
          std::string::npos);
  }
  for (const fs::path& p : kept) {
    CAPTURE(p);
    CHECK(fs::exists(p));
  }
  // A new run (--overwrite) cleans up too.
  std::ofstream(stale[0]) << "partial";
  REQUIRE(cmd_train(with_words(tiny_run(run, 1), {"--overwrite"})) == 0);
  CHECK_FALSE(fs::exists(stale[0]));
}

TEST_CASE("a run killed between a best epoch and the next checkpoint resumes to the same log") {
  // Model selection (physionet2012) writes best.json at every better epoch, between checkpoints:
  // a kill after it leaves a best.json newer than the checkpoint. The resumed run must judge the
  // epochs it redoes against the best as of its checkpoint, as the uninterrupted run did.
  TempDir tmp;
  const auto data = memgrad::test::physionet::make_data(tmp);
  auto run = [&](const fs::path& out, int iterations) {
    return with_words(physionet_run(data.dir, out),
                      {"--iterations", std::to_string(iterations), "--log-every", "4",
                       "--checkpoint-every", "5"});
  };
  const fs::path whole = tmp.path / "whole", split = tmp.path / "split";
  REQUIRE(cmd_train(run(whole, 36)) == 0);
  // The first epoch after the first that was the best so far, and its last step.
  int64_t best_step = -1;
  for (const auto& line : log_without_wall_time(whole))
    if (line.contains("epoch") && line["epoch"].get<int>() > 1 && line["best"].get<bool>()) {
      best_step = line["step"].get<int64_t>();
      break;
    }
  REQUIRE(best_step > 0);
  // A checkpoint just before that epoch ends, then the run past it (best.json written), then
  // the checkpoint put back: as if killed after best.json and before the next checkpoint.
  REQUIRE(cmd_train(run(split, int(best_step))) == 0);  // steps 0 .. best_step - 1
  const std::string saved = test::read_text(split / "checkpoint.safetensors");
  REQUIRE(cmd_train({"--resume", split.string(), "--iterations", std::to_string(best_step + 2),
                     "--quiet"}) == 0);
  std::ofstream(split / "checkpoint.safetensors", std::ios::binary) << saved;
  // A checkpoint without the record (format 2 before it existed) resumes as it did then.
  {
    TensorFile file = load_safetensors((split / "checkpoint.safetensors").string());
    REQUIRE(file.metadata.count("best_epoch"));
    file.metadata.erase("best_epoch");
    save_safetensors((split / "checkpoint.safetensors").string(), file);
    CHECK_NOTHROW(cmd_train(
        {"--resume", split.string(), "--iterations", std::to_string(best_step - 1), "--quiet"}));
    std::ofstream(split / "checkpoint.safetensors", std::ios::binary) << saved;
  }
  // Ended there, the run cannot use best.safetensors: it holds the later epoch's parameters.
  const std::string later =
      "best.safetensors: holds the parameters of step " + std::to_string(best_step + 1);
  CHECK_THROWS_WITH_AS(
      cmd_train({"--resume", split.string(), "--iterations", std::to_string(best_step), "--quiet"}),
      doctest::Contains(later.c_str()), Error);
  REQUIRE(cmd_train({"--resume", split.string(), "--iterations", "36", "--quiet"}) == 0);
  const std::vector<nlohmann::json> a = log_without_wall_time(whole),
                                    b = log_without_wall_time(split);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i);
    CHECK(dump_json(a[i]) == dump_json(b[i]));
  }
  CHECK(test::read_text(whole / "best.json") == test::read_text(split / "best.json"));
  CHECK(test::read_text(whole / "metrics.json") == test::read_text(split / "metrics.json"));
}
