// Typed reads of optional fields of API objects, collecting a FieldError for each field of the
// wrong type instead of throwing. Private to retention.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscaler/retention/field_error.h"
#include "shardscaler/retention/naming.h"

namespace shardscaler::retention::json_fields {

using Json = nlohmann::json;

// The member, or nullptr when the parent is not an object or the member is absent or null
// (JSON null and absence mean the same for optional Kubernetes fields).
const Json* member(const Json& parent, std::string_view key);

class FieldReader {
 public:
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
  StringMap stringMap(const Json& parent, std::string_view key, std::string_view path);

  void fail(std::string_view path, std::string message);

 private:
  std::vector<FieldError>& errors_;
};

}  // namespace shardscaler::retention::json_fields
