// JSON text in and out, compiled once (engine/json_text.cpp). nlohmann's parser is a template that
// every file calling nlohmann::json::parse instantiated and optimised again: about 2 s of compile
// time per file at -O3 and 5 s in the sanitizer build, in the 25 files that called it.
#pragma once
#include <istream>
#include <nlohmann/json.hpp>
#include <string_view>

namespace memgrad {

// nlohmann::json::parse: throws nlohmann::json::parse_error when the text is not JSON.
nlohmann::json parse_json(std::string_view text);
nlohmann::json parse_json(std::istream& in);
inline nlohmann::json parse_json(std::istream&& in) { return parse_json(in); }

// The same without exceptions: a value whose is_discarded() is true when the text is not JSON.
nlohmann::json parse_json_or_discarded(std::string_view text);
nlohmann::json parse_json_or_discarded(std::istream& in);

}  // namespace memgrad
