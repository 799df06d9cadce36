// Reads of API object fields shared by the controller's halves. Private to controller.
#pragma once

#include <charconv>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "shardscaler/k8s_client/field_mask.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/k8s_client/resource.h"

namespace shardscaler::controller {

// object[a][b], or null JSON when either level is missing or not an object.
inline const k8s::Json& field(const k8s::Json& object, std::string_view a, std::string_view b) {
  static const k8s::Json null;
  auto outer = object.find(a);
  if (outer == object.end() || !outer->is_object()) return null;
  auto inner = outer->find(b);
  return inner == outer->end() ? null : *inner;
}

inline std::string stringAt(const k8s::Json& object, std::string_view a, std::string_view b) {
  const k8s::Json& v = field(object, a, b);
  return v.is_string() ? v.get<std::string>() : std::string();
}

// What the controller reads of the object a write of its own is answered with: the version it
// records (OwnWrites) under the object's key, nothing else. A label patch of a StatefulSet is
// answered with the whole object (9.2 KB in issue 10's workload, its pod template among it), and
// building that answer's DOM cost about a third of the client's CPU per request.
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

// Held on every ShardSet so that its deletion cannot leave a target paused by shardscaler.
inline constexpr const char* kReleaseFinalizer = "shardscaler.io/release-target";
// On the ShardSet: the target it is bound to ("Prometheus/main"), so that a changed or invalid
// spec.targetRef still lets it release the target it managed. First written with the finalizer,
// before the claim: a release of a target the ShardSet never claimed writes nothing.
inline constexpr std::string_view kBoundTargetAnnotation = "shardscaler.io/target";

// Indexes of the StatefulSet caches: by the target the operator's name label attaches a shard
// to ("<namespace>/<name>"), and, for shards without that label (retained ones), by the
// ShardSet whose guard label they carry ("<namespace>/<name>").
inline constexpr const char* kAttachedIndex = "attached";
inline constexpr const char* kDetachedIndex = "detached";

}  // namespace shardscaler::controller
