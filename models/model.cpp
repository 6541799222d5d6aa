#include "models/model.hpp"

namespace memgrad {
namespace {
std::vector<ModelInfo>& registry() {
  static std::vector<ModelInfo> models;  // filled during static initialisation, read-only after
  return models;
}
}  // namespace

void register_model(ModelInfo info) {
  for (const ModelInfo& m : registry())
    MG_CHECK(m.name != info.name, "model '", info.name,
             "' is registered twice: a model name must be registered once (`--model` and its "
             "gradient checks find it by name)");
  registry().push_back(std::move(info));
}
const std::vector<ModelInfo>& all_models() { return registry(); }

std::unique_ptr<Model> create_model(const std::string& name, const nlohmann::json& config,
                                    DType dtype, uint64_t seed) {
  std::string known;
  for (const ModelInfo& m : registry()) {
    if (m.name == name) return m.create(config, dtype, seed);
    if (!known.empty()) known += ", ";
    known += m.name;
  }
  fail("unknown model '", name, "' (known: ", known, ")");
}

}  // namespace memgrad
