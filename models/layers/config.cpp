#include "models/layers/config.hpp"

#include "engine/error.hpp"
#include "engine/json_text.hpp"

namespace memgrad::layers {
namespace {

// The JSON type classes a config value may have: numbers are one class (an int default accepts a
// float and vice versa is checked by the reader), bools, strings, others.
int type_class(const nlohmann::json& j) {
  if (j.is_number()) return 0;
  if (j.is_boolean()) return 1;
  if (j.is_string()) return 2;
  return 3;
}

}  // namespace

nlohmann::json merge_config(const std::string& model, const nlohmann::json& defaults,
                            const nlohmann::json& user) {
  nlohmann::json out = defaults;
  if (user.is_null()) return out;
  MG_CHECK(user.is_object(), model, ": the config must be a JSON object, got ", dump_json(user));
  for (auto it = user.begin(); it != user.end(); ++it) {
    if (it.key() == "variant") continue;
    auto d = defaults.find(it.key());
    if (d == defaults.end()) {
      std::string known;
      for (auto k = defaults.begin(); k != defaults.end(); ++k)
        known += (known.empty() ? "" : ", ") + k.key();
      fail(model, ": unknown config key '", it.key(), "' (known: ", known, ")");
    }
    MG_CHECK(type_class(*d) == type_class(*it), model, ": config key '", it.key(),
             "' must be like ", d->dump(), ", got ", it->dump());
    out[it.key()] = *it;
  }
  return out;
}

int64_t config_int(const nlohmann::json& cfg, const std::string& model, const char* key,
                   int64_t min_value) {
  const nlohmann::json& v = cfg.at(key);
  MG_CHECK(v.is_number_integer() || (v.is_number() && v.get<double>() == double(v.get<int64_t>())),
           model, ": config key '", key, "' must be a whole number, got ", dump_json(v));
  const int64_t x = v.get<int64_t>();
  MG_CHECK(x >= min_value, model, ": config key '", key, "' must be at least ", min_value, ", got ",
           x);
  return x;
}

double config_dropout(const nlohmann::json& cfg, const std::string& model) {
  const double p = cfg.at("dropout").get<double>();
  MG_CHECK(p >= 0 && p < 1, model, ": dropout must be in [0, 1), got ", p);
  return p;
}

std::string config_choice(const nlohmann::json& cfg, const std::string& model, const char* key,
                          std::initializer_list<const char*> options) {
  const std::string value = cfg.at(key).get<std::string>();
  std::string list;
  size_t i = 0;
  for (const char* o : options) {
    if (value == o) return value;
    list += std::string(i == 0 ? "" : i + 1 == options.size() ? " or " : ", ") + "\"" + o + "\"";
    ++i;
  }
  fail(model, ": ", key, " must be ", options.size() > 2 ? "one of " : "", list, ", got \"", value,
       "\"");
}

}  // namespace memgrad::layers
