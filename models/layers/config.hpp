// Model configs: a model's defaults with the user's keys put over them, read back with checks.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>

namespace memgrad::layers {

// `defaults` with the keys of `user` put over it. A key of `user` that `defaults` lacks is an Error
// naming the model and the key; a key whose JSON type differs from the default's (number vs string
// vs bool) too. The label key "variant" (gradient-check configs) is ignored.
nlohmann::json merge_config(const std::string& model, const nlohmann::json& defaults,
                            const nlohmann::json& user);

// cfg[key] as an integer >= min_value; an Error names the model and the key otherwise.
int64_t config_int(const nlohmann::json& cfg, const std::string& model, const char* key,
                   int64_t min_value = 1);

// cfg["dropout"], a drop probability in [0, 1); an Error names the model and the value otherwise.
double config_dropout(const nlohmann::json& cfg, const std::string& model);

// cfg[key], a string that must be one of `options`; an Error names the model, the key, the options
// and the value otherwise ("amn: bank_moves must be "copy" or "migrate", got "swap"").
std::string config_choice(const nlohmann::json& cfg, const std::string& model, const char* key,
                          std::initializer_list<const char*> options);

}  // namespace memgrad::layers
