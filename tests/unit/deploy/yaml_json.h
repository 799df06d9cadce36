// YAML documents as nlohmann JSON for the deploy tests (unit and e2e): kubectl and kustomize
// write YAML, the checks read JSON. Header-only so tests/e2e can use it without a library; it
// never guesses a type for a quoted scalar.
#pragma once

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

namespace shardscaler::deploy_test {

// Plain scalars become null, booleans and numbers as YAML 1.2's core schema reads them; quoted
// ones ("true", "8080") stay strings.
inline nlohmann::json yamlToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : node) out.push_back(yamlToJson(item));
      return out;
    }
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& entry : node) out[entry.first.as<std::string>()] = yamlToJson(entry.second);
      return out;
    }
    case YAML::NodeType::Scalar:
      break;
  }
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return s;
  if (s.empty() || s == "null" || s == "Null" || s == "NULL" || s == "~") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  int64_t i = 0;
  if (auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
      ec == std::errc() && end == s.data() + s.size()) {
    return i;
  }
  static const std::regex kFloat(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  if (std::regex_match(s, kFloat)) return std::stod(s);
  return s;
}

// Every document of a YAML stream, null documents dropped. Throws YAML::Exception on bad syntax.
inline std::vector<nlohmann::json> yamlStreamToJson(const std::string& text) {
  std::vector<nlohmann::json> out;
  for (const YAML::Node& doc : YAML::LoadAll(text)) {
    nlohmann::json j = yamlToJson(doc);
    if (!j.is_null()) out.push_back(std::move(j));
  }
  return out;
}

}  // namespace shardscaler::deploy_test
