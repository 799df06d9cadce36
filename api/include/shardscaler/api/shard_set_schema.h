// Every field of the ShardSet's spec and status that the types above know, with its JSON type
// and the bounds, enums and defaults the types state: what the CRD's openAPIV3Schema must say.
// A description only; nothing validates objects against it.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace shardscaler::api {

enum class JsonType { Object, Array, String, Integer, Number, Boolean };
std::string_view toString(JsonType type);

struct FieldSchema {
  // "spec.shardRetentionPolicy.retain.retentionPeriod"; "[]" names a list's items:
  // "status.retainedShards[].index".
  std::string path;
  JsonType type = JsonType::Object;
  std::optional<int64_t> minimum;
  std::optional<int64_t> maximum;
  std::vector<std::string> enum_values;
  std::optional<std::string> default_value;  // as JSON text: "1"
  // The object keeps fields the types do not know (x-kubernetes-preserve-unknown-fields).
  bool preserves_unknown_fields = false;
};

// spec.* and status.*, parents before their fields.
std::span<const FieldSchema> shardSetFields();

}  // namespace shardscaler::api
