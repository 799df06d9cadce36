#include "shardscaler/planner/target.h"

#include <algorithm>
#include <limits>

#include "shardscaler/api/field_reader.h"
#include "shardscaler/k8s_meta/time.h"
#include "shardscaler/planner/operator_retention.h"

namespace shardscaler::planner {

int64_t operatorShardCount(std::optional<int64_t> written) {
  return written.has_value() && *written > 1 ? *written : 1;
}

int32_t Target::effectiveShards() const {
  const int64_t count = operatorShardCount(shards);
  return count > INT32_MAX ? INT32_MAX : static_cast<int32_t>(count);
}

std::optional<size_t> Target::topologyZones() const {
  if (sharding_mode != "Topology") return std::nullopt;
  return topology_values.size();
}

bool Target::pauseAcknowledged() const {
  return paused && status_paused == true && status_observed_generation.has_value() &&
         *status_observed_generation >= generation;
}

const std::string* Target::annotation(std::string_view key) const {
  auto it = annotations.find(key);
  return it == annotations.end() ? nullptr : &it->second;
}

bool Target::pausedBy(std::string_view shard_set) const {
  const std::string* by = annotation(api::kPausedByAnnotation);
  return paused && by != nullptr && *by == shard_set;
}

bool Target::stalePausedBy(std::string_view shard_set) const {
  const std::string* by = annotation(api::kPausedByAnnotation);
  return !paused && by != nullptr && *by == shard_set;
}

namespace {

// The operator's report, read leniently: a status it wrote in a shape we do not know is no
// acknowledgement, never an error.
void readOperatorStatus(const nlohmann::json& object, Target& t) {
  const auto* status = api::member(object, "status");
  if (status == nullptr || !status->is_object()) return;
  if (const auto* paused = api::member(*status, "paused"); paused && paused->is_boolean()) {
    t.status_paused = paused->get<bool>();
  }
  const auto* conditions = api::member(*status, "conditions");
  if (conditions == nullptr || !conditions->is_array()) return;
  for (const auto& c : *conditions) {
    const auto* g = api::member(c, "observedGeneration");
    if (g == nullptr || !g->is_number_integer()) continue;
    const auto value = g->get<int64_t>();
    if (!t.status_observed_generation || value < *t.status_observed_generation) {
      t.status_observed_generation = value;
    }
  }
}

// metadata.managedFields entries of other managers that own spec.shards or spec.paused. Read
// leniently: an entry in a shape we do not know names no writer.
void readSpecWriters(const nlohmann::json& metadata, Target& t) {
  const auto* entries = api::member(metadata, "managedFields");
  if (entries == nullptr || !entries->is_array()) return;
  for (const auto& entry : *entries) {
    const auto* manager = api::member(entry, "manager");
    const auto* fields = api::member(entry, "fieldsV1");
    const auto* subresource = api::member(entry, "subresource");
    if (manager == nullptr || !manager->is_string() || fields == nullptr ||
        (subresource != nullptr && subresource->is_string() && *subresource == "status")) {
      continue;
    }
    const std::string& name = manager->get_ref<const std::string&>();
    if (name == api::kFieldManager || name == api::kOperatorFieldManager) continue;
    const auto* spec = api::member(*fields, "f:spec");
    if (spec == nullptr || !spec->is_object()) continue;
    SpecWriter writer{.manager = name};
    for (const auto& [key, field] :
         {std::pair{"f:shards", "spec.shards"}, std::pair{"f:paused", "spec.paused"}}) {
      if (spec->contains(key)) writer.fields.emplace_back(field);
    }
    if (writer.fields.empty()) continue;
    if (const auto* op = api::member(entry, "operation"); op && op->is_string()) {
      writer.operation = op->get<std::string>();
    }
    if (const auto* time = api::member(entry, "time"); time && time->is_string()) {
      if (auto parsed = k8s::parseRfc3339(time->get<std::string>()))
        writer.time = parsed->toTimePoint();
    }
    t.spec_writers.push_back(std::move(writer));
  }
}

void readShardRetentionPolicy(const nlohmann::json& policy, const std::string& path,
                              api::FieldReader& r, Target& t) {
  t.has_shard_retention_policy = true;
  t.when_scaled = r.string(policy, "whenScaled", path + ".whenScaled");
  if (const auto* retain = r.object(policy, "retain", path + ".retain")) {
    t.has_retain = true;
    t.retain_period =
        r.string(*retain, "retentionPeriod", path + ".retain.retentionPeriod").value_or("");
  }
}

// The spec holds shardscaler's policy: the target's own is the one saved beside it. An unreadable
// saved policy is an error of the target (its retention cannot be told, so nothing is decided on
// it); a spec that merely equals shardscaler's policy without one saved is the target's own.
void readSavedPolicy(api::FieldReader& r, Target& t) {
  const std::string* saved = t.annotation(api::kSavedShardRetentionPolicyAnnotation);
  if (saved == nullptr) return;
  const std::string path =
      "metadata.annotations[" + std::string(api::kSavedShardRetentionPolicyAnnotation) + "]";
  nlohmann::json policy = nlohmann::json::parse(*saved, nullptr, /*allow_exceptions=*/false);
  if (policy.is_discarded() || (!policy.is_null() && !policy.is_object())) {
    r.fail(path,
           "is not a JSON object or null: the target's own spec.shardRetentionPolicy "
           "cannot be told from it");
    return;
  }
  t.has_shard_retention_policy = false;
  t.when_scaled.reset();
  t.has_retain = false;
  t.retain_period.clear();
  if (policy.is_object()) readShardRetentionPolicy(policy, path, r, t);
  t.retention_held = true;
  t.saved_shard_retention_policy = std::move(policy);
}

}  // namespace

std::expected<Target, api::FieldError> parseTarget(const nlohmann::json& object, TargetKind kind) {
  using api::member;
  if (!object.is_object())
    return std::unexpected(api::FieldError{"", "a target must be an object"});
  if (const auto* k = member(object, "kind")) {
    if (!k->is_string() || parseTargetKind(k->get<std::string>()) != kind) {
      return std::unexpected(api::FieldError{
          "kind", "expected " + std::string(toString(kind)) + ", got " + k->dump()});
    }
  }
  std::vector<api::FieldError> meta_errors;
  api::FieldReader meta(meta_errors);
  Target t;
  t.kind = kind;
  if (const auto* metadata = meta.object(object, "metadata", "metadata")) {
    t.name = meta.string(*metadata, "name", "metadata.name").value_or("");
    t.ns = meta.string(*metadata, "namespace", "metadata.namespace").value_or("");
    t.uid = meta.string(*metadata, "uid", "metadata.uid").value_or("");
    t.resource_version =
        meta.string(*metadata, "resourceVersion", "metadata.resourceVersion").value_or("");
    t.generation = meta.integer(*metadata, "generation", "metadata.generation").value_or(0);
    t.being_deleted = member(*metadata, "deletionTimestamp") != nullptr;
    t.annotations = meta.stringMap(*metadata, "annotations", "metadata.annotations");
    readSpecWriters(*metadata, t);
  }
  if (!meta_errors.empty()) return std::unexpected(meta_errors.front());
  if (t.name.empty()) return std::unexpected(api::FieldError{"metadata.name", "required"});
  if (t.uid.empty()) return std::unexpected(api::FieldError{"metadata.uid", "required"});

  readOperatorStatus(object, t);
  t.scrape = resharding::readTargetScrapeSpec(object);

  api::FieldReader r(t.spec_errors);
  const auto* spec = r.object(object, "spec", "spec");
  if (spec == nullptr) return t;
  t.shards = r.integer(*spec, "shards", "spec.shards");
  t.replicas = r.integer(*spec, "replicas", "spec.replicas");
  t.paused = r.boolean(*spec, "paused", "spec.paused").value_or(false);
  t.retention = r.string(*spec, "retention", "spec.retention");
  t.retention_size = r.string(*spec, "retentionSize", "spec.retentionSize");
  t.mode = r.string(*spec, "mode", "spec.mode");
  // Counted only: the operator validates its remote-write entries, and a drain needs how many
  // queues each shard runs.
  if (const auto* remote_write = member(*spec, "remoteWrite");
      remote_write != nullptr && remote_write->is_array()) {
    t.remote_writes = static_cast<int32_t>(
        std::min<size_t>(remote_write->size(), std::numeric_limits<int32_t>::max()));
  }
  if (const auto* p = r.object(*spec, "shardRetentionPolicy", "spec.shardRetentionPolicy")) {
    readShardRetentionPolicy(*p, "spec.shardRetentionPolicy", r, t);
    t.spec_shard_retention_policy = *p;
    t.spec_retains = t.when_scaled == "Retain";
    if (*p == heldShardRetentionPolicy()) readSavedPolicy(r, t);
  }
  // Read for the pods' own /metrics only: what the planner never reads is no spec error of its.
  if (const auto* web = member(*spec, "web"); web != nullptr && web->is_object()) {
    if (const auto* tls = member(*web, "tlsConfig"); tls != nullptr && tls->is_object()) {
      t.web_tls = true;
      const auto* type = member(*tls, "clientAuthType");
      t.web_client_auth_type = type != nullptr && type->is_string() ? type->get<std::string>() : "";
    }
  }
  if (const auto* s = r.object(*spec, "shardingStrategy", "spec.shardingStrategy")) {
    t.sharding_mode = r.string(*s, "mode", "spec.shardingStrategy.mode");
    if (const auto* topo = r.object(*s, "topology", "spec.shardingStrategy.topology")) {
      if (const auto* values = r.array(*topo, "values", "spec.shardingStrategy.topology.values")) {
        for (const auto& v : *values) {
          if (v.is_string()) {
            t.topology_values.push_back(v.get<std::string>());
          } else {
            r.fail("spec.shardingStrategy.topology.values", "entries must be strings");
          }
        }
      }
    }
  }
  return t;
}

}  // namespace shardscaler::planner
