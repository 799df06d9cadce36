#include "shardscaler/api/field_reader.h"

namespace shardscaler::api {

using Json = nlohmann::json;

const nlohmann::json* member(const nlohmann::json& parent, std::string_view key) {
  if (!parent.is_object()) return nullptr;
  auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) return nullptr;
  return &*it;
}

void FieldReader::fail(std::string_view path, std::string message) {
  errors_.push_back(FieldError{std::string(path), std::move(message)});
}

std::optional<int64_t> FieldReader::integer(const Json& parent, std::string_view key,
                                            std::string_view path) {
  const Json* v = member(parent, key);
  if (v == nullptr) return std::nullopt;
  if (v->is_number_unsigned()) {
    const auto u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) {
      fail(path, "integer out of range");
      return std::nullopt;
    }
    return static_cast<int64_t>(u);
  }
  if (v->is_number_integer()) return v->get<int64_t>();
  fail(path, "must be an integer, got " + v->dump());
  return std::nullopt;
}

std::optional<std::string> FieldReader::string(const Json& parent, std::string_view key,
                                               std::string_view path) {
  const Json* v = member(parent, key);
  if (v == nullptr) return std::nullopt;
  if (v->is_string()) return v->get<std::string>();
  fail(path, "must be a string, got " + v->dump());
  return std::nullopt;
}

std::optional<bool> FieldReader::boolean(const Json& parent, std::string_view key,
                                         std::string_view path) {
  const Json* v = member(parent, key);
  if (v == nullptr) return std::nullopt;
  if (v->is_boolean()) return v->get<bool>();
  fail(path, "must be a boolean, got " + v->dump());
  return std::nullopt;
}

const Json* FieldReader::object(const Json& parent, std::string_view key, std::string_view path) {
  const Json* v = member(parent, key);
  if (v == nullptr) return nullptr;
  if (v->is_object()) return v;
  fail(path, "must be an object");
  return nullptr;
}

const Json* FieldReader::array(const Json& parent, std::string_view key, std::string_view path) {
  const Json* v = member(parent, key);
  if (v == nullptr) return nullptr;
  if (v->is_array()) return v;
  fail(path, "must be a list");
  return nullptr;
}

std::map<std::string, std::string, std::less<>> FieldReader::stringMap(const Json& parent,
                                                                       std::string_view key,
                                                                       std::string_view path) {
  std::map<std::string, std::string, std::less<>> out;
  const Json* v = object(parent, key, path);
  if (v == nullptr) return out;
  for (const auto& [k, value] : v->items()) {
    if (value.is_string()) {
      out.emplace(k, value.get<std::string>());
    } else {
      fail(std::string(path) + "." + k, "must be a string");
    }
  }
  return out;
}

}  // namespace shardscaler::api
