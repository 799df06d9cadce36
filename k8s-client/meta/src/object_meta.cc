#include "shardscaler/k8s_meta/object_meta.h"

namespace shardscaler::k8s::meta {
namespace {

const std::string* metadataString(const nlohmann::json& object, std::string_view map,
                                  std::string_view key) {
  const nlohmann::json& values = field(object, "metadata", map);
  if (!values.is_object()) return nullptr;
  const auto value = values.find(key);
  if (value == values.end() || !value->is_string()) return nullptr;
  return value->get_ptr<const std::string*>();
}

}  // namespace

const nlohmann::json& member(const nlohmann::json& object, std::string_view key) {
  static const nlohmann::json null;
  if (!object.is_object()) return null;
  const auto value = object.find(key);
  return value == object.end() ? null : *value;
}

std::string stringOf(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : std::string();
}

const nlohmann::json& field(const nlohmann::json& object, std::string_view outer,
                            std::string_view inner) {
  static const nlohmann::json null;
  if (!object.is_object()) return null;
  const auto level = object.find(outer);
  if (level == object.end() || !level->is_object()) return null;
  const auto value = level->find(inner);
  return value == level->end() ? null : *value;
}

std::string stringAt(const nlohmann::json& object, std::string_view outer, std::string_view inner) {
  const nlohmann::json& value = field(object, outer, inner);
  return value.is_string() ? value.get<std::string>() : std::string();
}

const std::string* label(const nlohmann::json& object, std::string_view key) {
  return metadataString(object, "labels", key);
}

const std::string* annotation(const nlohmann::json& object, std::string_view key) {
  return metadataString(object, "annotations", key);
}

bool beingDeleted(const nlohmann::json& object) {
  return !field(object, "metadata", "deletionTimestamp").is_null();
}

}  // namespace shardscaler::k8s::meta
