// Shared by the libFuzzer targets (tests/fuzz/README.md): the bytes of an input as a file, for
// loaders that read paths.
//
// A target returns normally when the parser returns or throws the error type it documents for
// bad input (memgrad::Error, metrics::DataError); libFuzzer reports everything else: any other
// exception (uncaught: abort), a crash, an AddressSanitizer or UndefinedBehaviorSanitizer finding,
// a leak, a hang (-timeout) or memory beyond -rss_limit_mb.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace memgrad::fuzz {

// A folder of this process (in /dev/shm when there is one: no disk writes per input), removed at
// exit.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    namespace fs = std::filesystem;
    const fs::path base =
        fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    fs::path d = base / ("memgrad-fuzz-" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  static const bool cleanup = [] {
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir(), ec);
    });
    return true;
  }();
  (void)cleanup;
  return dir;
}

// Writes bytes to scratch_dir()/name (folders created) and returns the path.
inline std::string write_file(const std::string& name, std::string_view bytes) {
  const std::filesystem::path p = scratch_dir() / name;
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  return p.string();
}

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace memgrad::fuzz
