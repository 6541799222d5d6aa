// JSON text in and out (see json_text.hpp).
#include "engine/json_text.hpp"

namespace memgrad {

nlohmann::json parse_json(std::string_view text) { return nlohmann::json::parse(text); }

nlohmann::json parse_json(std::istream& in) { return nlohmann::json::parse(in); }

nlohmann::json parse_json_or_discarded(std::string_view text) {
  return nlohmann::json::parse(text, /*callback=*/nullptr, /*allow_exceptions=*/false);
}

nlohmann::json parse_json_or_discarded(std::istream& in) {
  return nlohmann::json::parse(in, /*callback=*/nullptr, /*allow_exceptions=*/false);
}

std::string dump_json(const nlohmann::json& value, int indent) { return value.dump(indent); }

std::string dump_json(const nlohmann::ordered_json& value, int indent) {
  return value.dump(indent);
}

}  // namespace memgrad
