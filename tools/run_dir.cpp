#include "tools/run_dir.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/checkpoint.hpp"
#include "engine/error.hpp"

namespace memgrad::cli {

std::string RunDir::parameters() const {
  return std::filesystem::exists(best()) ? best() : checkpoint();
}

void RunDir::create() const {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  MG_CHECK(!ec, "cannot create run directory ", path, ": ", ec.message());
}

void RunDir::write_json(const std::string& file, const nlohmann::json& j) const {
  write_file_atomically(file, j.dump(2) + "\n");
}

nlohmann::json RunDir::read_json(const std::string& file) const {
  check_not_directory(file);
  std::ifstream in(file);
  MG_CHECK(in.good(), "cannot read ", file, " (is ", path, " a memgrad run directory?)");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    fail(file, ": invalid JSON: ", e.what());
  }
}

void RunDir::append_log(const nlohmann::json& line) const {
  std::ofstream out(log(), std::ios::app);
  MG_CHECK(out.good(), "cannot append to ", log());
  out << line.dump() << '\n';
}

void RunDir::truncate_log(int64_t step) const {
  std::ifstream in(log());
  if (!in.good()) return;
  std::ostringstream kept;
  std::string line;
  int64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      fail(log(), ":", number, ": not a JSON line");
    }
    if (j.contains("step") && j["step"].get<int64_t>() >= step) continue;
    kept << line << '\n';
  }
  write_file_atomically(log(), kept.str());
}

}  // namespace memgrad::cli
