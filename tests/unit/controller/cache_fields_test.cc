// What the StatefulSet cache holds per object, by count of bytes: an operator shard's metadata as
// the API server sends it (PartialObjectMetadata) goes through the cache's field mask, and the
// decoded tree must stay within the recorded budget. A field more in the mask, or managedFields
// kept, costs every one of 10,000 cached StatefulSets and fails here; a change that needs more
// raises kBudgetBytes in the same commit and says why (CONTRIBUTING.md, "Request budgets").
#include "shardscaler/controller/cache_fields.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace shardscaler::controller {
namespace {

using Json = nlohmann::json;

// Heap bytes of one allocation of `n` bytes under glibc malloc on x86-64: 8 bytes of header,
// rounded up to 16, at least 32. Counted rather than read from the allocator (mallinfo2), so
// that the test means the same under the sanitizers' allocators.
std::size_t chunk(std::size_t n) {
  const std::size_t rounded = (n + 8 + 15) / 16 * 16;
  return rounded < 32 ? 32 : rounded;
}

// A std::string's heap beyond its own 32 bytes: none up to 15 characters (the small-string
// buffer), else its buffer.
std::size_t stringHeap(const std::string& s) { return s.size() > 15 ? chunk(s.size() + 1) : 0; }

// Heap bytes behind a JSON value as libstdc++ lays out nlohmann::json (a 16-byte value whose
// object, array or string lives on the heap): an object is a std::map (48 bytes) with a node
// of 80 bytes per member (the tree links, the key, the value); an array a std::vector (24 bytes)
// and its buffer of 16-byte values; a string a std::string (32 bytes) and its buffer.
std::size_t heapBytes(const Json& value) {
  std::size_t bytes = 0;
  if (value.is_object()) {
    bytes += chunk(48);
    for (const auto& [key, member] : value.items()) {
      bytes += chunk(80) + stringHeap(key) + heapBytes(member);
    }
  } else if (value.is_array()) {
    bytes += chunk(24);
    if (!value.empty()) bytes += chunk(16 * value.size());
    for (const Json& element : value) bytes += heapBytes(element);
  } else if (value.is_string()) {
    bytes += chunk(32) + stringHeap(value.get_ref<const std::string&>());
  }
  return bytes;
}

// An attached shard of Prometheus "main" after shardscaler's first claim, as a watch or a list
// sends it (PartialObjectMetadata): the operator's labels and annotations, its owner reference,
// and the managedFields of the operator, kube-controller-manager and shardscaler.
std::string operatorShard(int index) {
  Json object = Json::parse(R"({
  "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
  "metadata": {
    "name": "prometheus-main-shard-1", "namespace": "monitoring",
    "uid": "8d1f4e2a-3b1c-4c52-9f0e-6a7b2c9d1e00", "resourceVersion": "48213377",
    "generation": 3, "creationTimestamp": "2026-11-20T10:00:00Z",
    "labels": {
      "app.kubernetes.io/instance": "main", "app.kubernetes.io/managed-by": "prometheus-operator",
      "app.kubernetes.io/name": "prometheus", "app.kubernetes.io/version": "3.13.2",
      "operator.prometheus.io/mode": "server", "operator.prometheus.io/name": "main",
      "operator.prometheus.io/shard": "1", "prometheus": "main",
      "shardscaler.io/shardset": "main"
    },
    "annotations": {
      "operator.prometheus.io/controller-id": "",
      "prometheus-operator-input-hash": "15533302424163585921"
    },
    "ownerReferences": [{"apiVersion": "monitoring.coreos.com/v1", "kind": "Prometheus",
      "name": "main", "uid": "0c8b6a44-5d2e-4f1a-8b3c-2e9d7f6a5b41",
      "controller": true, "blockOwnerDeletion": true}],
    "managedFields": [
      {"manager": "PrometheusOperator", "operation": "Update", "apiVersion": "apps/v1",
       "time": "2026-11-20T10:00:00Z", "fieldsType": "FieldsV1",
       "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:operator.prometheus.io/controller-id": {},
           "f:prometheus-operator-input-hash": {}},
         "f:labels": {".": {}, "f:app.kubernetes.io/instance": {}, "f:app.kubernetes.io/managed-by": {},
           "f:app.kubernetes.io/name": {}, "f:app.kubernetes.io/version": {},
           "f:operator.prometheus.io/mode": {}, "f:operator.prometheus.io/name": {},
           "f:operator.prometheus.io/shard": {}, "f:prometheus": {}},
         "f:ownerReferences": {".": {}, "k:{\"uid\":\"0c8b6a44-5d2e-4f1a-8b3c-2e9d7f6a5b41\"}": {}}},
         "f:spec": {"f:podManagementPolicy": {}, "f:replicas": {}, "f:selector": {},
           "f:serviceName": {}, "f:template": {"f:metadata": {"f:labels": {}}, "f:spec": {
             "f:containers": {}, "f:securityContext": {}, "f:volumes": {}}}}}},
      {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "apps/v1",
       "time": "2026-11-20T10:00:05Z", "fieldsType": "FieldsV1", "subresource": "status",
       "fieldsV1": {"f:status": {"f:availableReplicas": {}, "f:collisionCount": {},
         "f:currentReplicas": {}, "f:currentRevision": {}, "f:observedGeneration": {},
         "f:readyReplicas": {}, "f:replicas": {}, "f:updateRevision": {}, "f:updatedReplicas": {}}}},
      {"manager": "shardscaler", "operation": "Update", "apiVersion": "apps/v1",
       "time": "2026-11-20T10:01:00Z", "fieldsType": "FieldsV1",
       "fieldsV1": {"f:metadata": {"f:labels": {"f:shardscaler.io/shardset": {}}}}}
    ]
  }
})");
  object["metadata"]["name"] = "prometheus-main-shard-" + std::to_string(index);
  object["metadata"]["labels"]["operator.prometheus.io/shard"] = std::to_string(index);
  return object.dump();
}

// 10,000 cached StatefulSets cost 10,000 times this: 2,000 bytes is 20 MB. Measured 1,904 bytes
// when recorded (four labels, the key, the resourceVersion and generation, an empty annotations
// object).
constexpr std::size_t kBudgetBytes = 2000;

std::size_t cachedBytes(const std::string& text, const k8s::FieldMask& mask) {
  auto decoded = k8s::parseProjected(text, mask);
  EXPECT_TRUE(decoded) << decoded.error().describe();
  // The cache holds each object behind a std::make_shared<const Json>: one block with the count.
  return decoded ? chunk(16 + 16) + heapBytes(*decoded) : 0;
}

TEST(StatefulSetCache, KeepsAnOperatorShardWithinItsBudget) {
  const auto mask = statefulSetCacheFields();
  std::size_t total = 0;
  constexpr int kObjects = 10;
  for (int i = 0; i < kObjects; ++i) total += cachedBytes(operatorShard(i), *mask);
  const std::size_t per_object = total / kObjects;
  EXPECT_LE(per_object, kBudgetBytes)
      << "the StatefulSet cache now holds " << per_object << " bytes per operator shard";
  RecordProperty("bytes_per_cached_statefulset", static_cast<int>(per_object));
}

// The count tells a mask that keeps more from this one: whole metadata without managedFields,
// what the cache held before it kept only what it reads, is well over the budget.
TEST(StatefulSetCache, WholeMetadataWouldBreakTheBudget) {
  const auto whole =
      k8s::FieldMask::keepNone().keep({"metadata"}).drop({"metadata", "managedFields"});
  EXPECT_GT(cachedBytes(operatorShard(1), whole), kBudgetBytes);
  const auto with_managed_fields = k8s::FieldMask::keepNone().keep({"metadata"});
  EXPECT_GT(cachedBytes(operatorShard(1), with_managed_fields),
            2 * cachedBytes(operatorShard(1), whole));
}

// The cache keeps what the controller reads and drops the rest: no managedFields, no owner
// references, no labels or annotations it does not read.
TEST(StatefulSetCache, KeepsOnlyTheFieldsItReads) {
  auto decoded = k8s::parseProjected(operatorShard(1), *statefulSetCacheFields());
  ASSERT_TRUE(decoded);
  const Json& metadata = (*decoded)["metadata"];
  EXPECT_FALSE(metadata.contains("managedFields"));
  EXPECT_FALSE(metadata.contains("ownerReferences"));
  EXPECT_FALSE(metadata.contains("uid"));
  EXPECT_EQ(metadata["labels"].size(), 4U) << metadata["labels"].dump();
  EXPECT_TRUE(metadata.value("annotations", Json::object()).empty()) << metadata.dump();
  EXPECT_EQ(metadata["labels"].value("shardscaler.io/shardset", ""), "main");
}

// A plan from the caches parses the target from this mask: spec.web (TLS of the pods' own
// /metrics) is kept, the rest of the pod template is not; with the saved shard retention policy.
TEST(TargetCache, KeepsTheWebTlsAndTheSavedShardRetentionPolicy) {
  const Json target = {
      {"metadata",
       {{"name", "main"},
        {"namespace", "monitoring"},
        {"uid", "u"},
        {"annotations",
         {{"shardscaler.io/saved-shard-retention-policy", "null"}, {"other", "x"}}}}},
      {"spec",
       {{"shards", 3},
        {"web", {{"tlsConfig", {{"clientAuthType", "RequireAndVerifyClientCert"}}}}},
        {"containers", Json::array({{{"name", "prometheus"}}})}}}};
  auto decoded = k8s::parseProjected(target.dump(), *targetCacheFields());
  ASSERT_TRUE(decoded);
  EXPECT_EQ((*decoded)["spec"]["web"], target["spec"]["web"]) << decoded->dump();
  EXPECT_FALSE((*decoded)["spec"].contains("containers")) << decoded->dump();
  // The target's own shard retention policy, saved while shardscaler holds the target's.
  EXPECT_EQ((*decoded)["metadata"]["annotations"],
            Json({{"shardscaler.io/saved-shard-retention-policy", "null"}}));
}

}  // namespace
}  // namespace shardscaler::controller
