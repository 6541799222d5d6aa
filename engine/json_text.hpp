// JSON text in and out, compiled once (engine/json_text.cpp). nlohmann's parser and serializer are
// templates that every file calling nlohmann::json::parse or .dump() instantiated and optimised
// again: about 2 s of compile time per file at -O3 and 5 s in the sanitizer build for the parser
// (25 files), 1.1 s and 1.7 s for the serializer (31 files).
#pragma once
#include <istream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace memgrad {

// nlohmann::json::parse: throws nlohmann::json::parse_error when the text is not JSON.
nlohmann::json parse_json(std::string_view text);
nlohmann::json parse_json(std::istream& in);
inline nlohmann::json parse_json(std::istream&& in) { return parse_json(in); }

// The same without exceptions: a value whose is_discarded() is true when the text is not JSON.
nlohmann::json parse_json_or_discarded(std::string_view text);
nlohmann::json parse_json_or_discarded(std::istream& in);

// value.dump(indent): the text of a value, on one line when indent < 0, else indented by that
// many spaces a level. The ordered_json overload keeps its keys' order (without it an ordered_json
// would convert to a json, whose keys are sorted).
std::string dump_json(const nlohmann::json& value, int indent = -1);
std::string dump_json(const nlohmann::ordered_json& value, int indent = -1);

}  // namespace memgrad
