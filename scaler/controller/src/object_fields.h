// What the controller's parts share about the objects they read and write. Private to controller.
#pragma once

#include <charconv>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "shardscaler/k8s_client/field_mask.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/k8s_meta/object_meta.h"
#include "shardscaler/k8s_meta/resource.h"

namespace shardscaler::controller {

// The metadata accessors, as the controller's files call them.
using k8s::meta::field;
using k8s::meta::stringAt;

// What the controller reads of the object a write of its own is answered with: the version it
// records (Expectations) under the object's key, nothing else, not the whole object with its pod
// template.
inline const k8s::AnswerFields& writeAnswer() {
  static const k8s::AnswerFields kRead{
      .metadata_only = true,
      .fields = std::make_shared<const k8s::FieldMask>(k8s::FieldMask::keepNone()
                                                           .keep({"metadata", "namespace"})
                                                           .keep({"metadata", "name"})
                                                           .keep({"metadata", "uid"})
                                                           .keep({"metadata", "resourceVersion"})),
  };
  return kRead;
}

// A resourceVersion as the etcd revision etcd-backed API servers write it (0: not one). Clients
// may rely on no more than that, and comparing two of one resource is all it is used for.
inline std::uint64_t revisionOf(std::string_view resource_version) {
  std::uint64_t value = 0;
  const char* end = resource_version.data() + resource_version.size();
  const auto [at, ec] = std::from_chars(resource_version.data(), end, value);
  return ec == std::errc() && at == end ? value : 0;
}

// Whether `resource_version` is at least `floor`. Never for a version that is not a number: it
// cannot be ordered, so it proves nothing (docs/design/reads.md).
inline bool notOlderThan(std::string_view resource_version, std::uint64_t floor) {
  const std::uint64_t value = revisionOf(resource_version);
  return value != 0 && value >= floor;
}

}  // namespace shardscaler::controller
