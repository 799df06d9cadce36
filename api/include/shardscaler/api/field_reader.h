// Typed reads of optional fields of API objects (the ShardSet's, and the target's and
// StatefulSets' the planner reads), collecting a FieldError for each field of the wrong type.
// Never throws and never guesses a value for a field of the wrong type.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscaler/api/field_error.h"

namespace shardscaler::api {

// The member, or nullptr when the parent is not an object or the member is absent or null
// (JSON null and absence mean the same for optional Kubernetes fields).
const nlohmann::json* member(const nlohmann::json& parent, std::string_view key);

class FieldReader {
 public:
  using Json = nlohmann::json;

  explicit FieldReader(std::vector<FieldError>& errors) : errors_(errors) {}

  // Each returns nullopt when absent; a present value of the wrong type is recorded as an
  // error under `path` and also reads as nullopt.
  std::optional<int64_t> integer(const Json& parent, std::string_view key, std::string_view path);
  std::optional<std::string> string(const Json& parent, std::string_view key,
                                    std::string_view path);
  std::optional<bool> boolean(const Json& parent, std::string_view key, std::string_view path);
  // An object member; a present non-object is an error.
  const Json* object(const Json& parent, std::string_view key, std::string_view path);
  const Json* array(const Json& parent, std::string_view key, std::string_view path);
  // A map of strings (labels, annotations).
  std::map<std::string, std::string, std::less<>> stringMap(const Json& parent,
                                                            std::string_view key,
                                                            std::string_view path);

  void fail(std::string_view path, std::string message);

 private:
  std::vector<FieldError>& errors_;
};

}  // namespace shardscaler::api
