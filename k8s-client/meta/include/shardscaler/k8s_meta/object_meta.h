// Reads of an object's metadata from its JSON (as apimachinery's meta.Accessor), for every
// component that looks at labels, annotations and names. Tolerant: any JSON at all is read as
// "absent" where it is not what the field should be; nothing here throws or writes.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace shardscaler::k8s::meta {

// object[key], or null JSON when it is missing or object is not an object.
const nlohmann::json& member(const nlohmann::json& object, std::string_view key);
// value when it is a string, else "".
std::string stringOf(const nlohmann::json& value);
// object[outer][inner], or null JSON when either level is missing or not an object.
const nlohmann::json& field(const nlohmann::json& object, std::string_view outer,
                            std::string_view inner);
// object[outer][inner] when it is a string, else "".
std::string stringAt(const nlohmann::json& object, std::string_view outer, std::string_view inner);
// metadata.labels[key] / metadata.annotations[key] when it is a string, else nullptr.
const std::string* label(const nlohmann::json& object, std::string_view key);
const std::string* annotation(const nlohmann::json& object, std::string_view key);
// metadata.deletionTimestamp is set (not null).
bool beingDeleted(const nlohmann::json& object);

}  // namespace shardscaler::k8s::meta
