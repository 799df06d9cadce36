#include "shard_naming.h"

#include <charconv>

namespace shardscaler::emulator {

namespace {

const Json* specField(const Json& target, const char* field) {
  auto spec = target.find("spec");
  if (spec == target.end() || !spec->is_object()) return nullptr;
  auto value = spec->find(field);
  if (value == spec->end() || !value->is_number_integer()) return nullptr;
  return &*value;
}

const Json& metadataOf(const Json& object) {
  static const Json empty = Json::object();
  auto meta = object.find("metadata");
  return meta != object.end() && meta->is_object() ? *meta : empty;
}

}  // namespace

const Json& objectField(const Json& object, const char* field) {
  static const Json empty = Json::object();
  if (!object.is_object()) return empty;
  auto value = object.find(field);
  return value != object.end() && value->is_object() ? *value : empty;
}

int shardsNumber(const Json& target) {
  const Json* shards = specField(target, "shards");
  if (!shards || shards->get<long long>() <= 1) return 1;
  return static_cast<int>(shards->get<long long>());
}

long long specShardsOrOne(const Json& target) {
  const Json* shards = specField(target, "shards");
  return shards ? shards->get<long long>() : 1;
}

int replicasNumber(const Json& target) {
  const Json* replicas = specField(target, "replicas");
  if (!replicas) return 1;
  long long value = replicas->get<long long>();
  return value < 0 ? 1 : static_cast<int>(value);
}

std::string statefulSetName(const TargetKind& kind, const std::string& target_name, int shard) {
  std::string base = kind.prefix + "-" + target_name;
  return shard == 0 ? base : base + "-shard-" + std::to_string(shard);
}

std::vector<std::string> expectedStatefulSetNames(const TargetKind& kind, const Json& target) {
  const std::string name = metadataOf(target).value("name", "");
  std::vector<std::string> names;
  names.reserve(static_cast<std::size_t>(shardsNumber(target)));
  for (int shard = 0; shard < shardsNumber(target); ++shard) {
    names.push_back(statefulSetName(kind, name, shard));
  }
  return names;
}

std::optional<int> shardOfStatefulSetName(const TargetKind& kind, const std::string& target_name,
                                          const std::string& statefulset_name) {
  const std::string base = kind.prefix + "-" + target_name;
  if (statefulset_name == base) return 0;
  const std::string shard_prefix = base + "-shard-";
  if (statefulset_name.rfind(shard_prefix, 0) != 0) return std::nullopt;
  const std::string digits = statefulset_name.substr(shard_prefix.size());
  int shard = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), shard);
  if (ec != std::errc() || end != digits.data() + digits.size() || shard <= 0) return std::nullopt;
  if (std::to_string(shard) != digits) return std::nullopt;  // "-shard-01" is not shard 1's name
  return shard;
}

std::string configSecretName(const TargetKind& kind, const std::string& target_name) {
  return kind.prefix + "-" + target_name;
}

std::string statefulSetInformerSelector(const TargetKind& kind) {
  // operator.ManagedByOperatorLabelSelector() uses the legacy "managed-by" key.
  return std::string(kManagedByLegacyLabel) + " in (" + kManagedByValue + ")," + kShardLabel + "," +
         kNameLabel + "," + kModeLabel + " in (" + kind.mode + ")";
}

Labels selectorLabels(const TargetKind& kind, const std::string& target_name) {
  Labels labels{
      {kManagedByLabel, kManagedByValue},
      {kAppNameLabel, kind.app_name},
      {kAppInstanceLabel, target_name},
      {kNameLabel, target_name},
  };
  if (kind.server) labels["prometheus"] = target_name;
  return labels;
}

std::string selectorString(const Labels& labels) {
  std::string out;
  for (const auto& [key, value] : labels) {  // std::map: sorted like labels.Set.String()
    if (!out.empty()) out += ",";
    out.append(key).append("=").append(value);
  }
  return out;
}

Labels cleanupSelector(const TargetKind& kind, const std::string& target_name) {
  return {{kNameLabel, target_name}, {kModeLabel, kind.mode}};
}

Labels stringMap(const Json& object, const char* field) {
  Labels out;
  const Json& meta = metadataOf(object);
  auto map = meta.find(field);
  if (map == meta.end() || !map->is_object()) return out;
  for (const auto& [key, value] : map->items()) {
    if (value.is_string()) out[key] = value.get<std::string>();
  }
  return out;
}

bool matchesLabels(const Json& object, const Labels& selector) {
  const Labels labels = stringMap(object, "labels");
  for (const auto& [key, value] : selector) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  return true;
}

Json ownerReference(const TargetKind& kind, const Json& target) {
  const Json& meta = metadataOf(target);
  return Json{{"apiVersion", kind.api_version},
              {"kind", kind.kind},
              {"name", meta.value("name", "")},
              {"uid", meta.value("uid", "")}};
}

Json controllerOwnerReference(const TargetKind& kind, const Json& target) {
  Json ref = ownerReference(kind, target);
  ref["controller"] = true;
  ref["blockOwnerDeletion"] = true;
  return ref;
}

bool managedByController(const Json& object, const std::string& controller_id) {
  auto annotations = stringMap(object, "annotations");
  auto it = annotations.find(kControllerIdAnnotation);
  return (it == annotations.end() ? std::string() : it->second) == controller_id;
}

bool deletionInProgress(const Json& object) {
  const Json& meta = metadataOf(object);
  auto ts = meta.find("deletionTimestamp");
  return ts != meta.end() && !ts->is_null();
}

}  // namespace shardscaler::emulator
