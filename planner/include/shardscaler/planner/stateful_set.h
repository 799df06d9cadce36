// The parts of an observed apps/v1 StatefulSet that the planner reads, and the reader
// that fills them from the API object. It never decides whose StatefulSet it is.
#pragma once

#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscaler/api/field_error.h"
#include "shardscaler/planner/naming.h"

namespace shardscaler::planner {

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
  bool block_owner_deletion = false;
};

struct ObservedStatefulSet {
  std::string name;
  std::string uid;
  std::string resource_version;
  StringMap labels;
  StringMap annotations;
  std::vector<OwnerReference> owner_references;
  bool being_deleted = false;  // metadata.deletionTimestamp set

  const std::string* label(std::string_view key) const;
  const std::string* annotation(std::string_view key) const;
};

std::expected<ObservedStatefulSet, api::FieldError> parseStatefulSet(const nlohmann::json& object);

}  // namespace shardscaler::planner
