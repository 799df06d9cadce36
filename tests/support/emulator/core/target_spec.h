// Reading a target's spec as the operator does: a field that is missing, not a string or empty
// takes the operator's default.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace shardscaler::emulator {

// target["spec"], or an empty object when it is missing or not an object.
inline const nlohmann::json& specOf(const nlohmann::json& target) {
  static const nlohmann::json empty = nlohmann::json::object();
  auto spec = target.find("spec");
  return spec != target.end() && spec->is_object() ? *spec : empty;
}

// spec[field] when it is a non-empty string, else `fallback`.
inline std::string specString(const nlohmann::json& spec, const char* field,
                              const std::string& fallback) {
  auto value = spec.find(field);
  return value != spec.end() && value->is_string() && !value->get<std::string>().empty()
             ? value->get<std::string>()
             : fallback;
}

}  // namespace shardscaler::emulator
