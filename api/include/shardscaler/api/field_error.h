// A problem with one field of an input object, named by its JSON path ("spec.minShards").
// A plain value: it never throws and never refers back to the object.
#pragma once

#include <string>

namespace shardscaler::api {

struct FieldError {
  std::string field;    // "spec.shardRetentionPolicy.retain.retentionPeriod"
  std::string message;  // "not a valid duration string: \"3x\""

  // "spec.minShards: must be at least 1"
  std::string describe() const { return field.empty() ? message : field + ": " + message; }
  friend bool operator==(const FieldError&, const FieldError&) = default;
};

}  // namespace shardscaler::api
