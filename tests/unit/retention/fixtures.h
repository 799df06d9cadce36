// Builders of the API objects the retention planner reads (as JSON, so the readers are exercised
// too) and a compact rendering of plans for table-driven tests. Test-only; no I/O, no clock.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscaler/retention/planner.h"

namespace shardscaler::retention::testing {

using Json = nlohmann::json;
using std::chrono::system_clock;

inline constexpr const char* kTargetUid = "6f1c0a52-prom-main";
inline constexpr const char* kNamespace = "monitoring";

// 2026-11-22T10:00:00Z
inline system_clock::time_point fixedNow() {
  using namespace std::chrono;
  return sys_days{year{2026} / November / 22} + hours{10};
}

inline Json shardSetJson(int64_t shards, const Json& spec_patch = Json::object()) {
  Json j{{"apiVersion", "shardscaler.io/v1alpha1"},
         {"kind", "ShardSet"},
         {"metadata", {{"name", "main"}, {"namespace", kNamespace}, {"generation", 4}}},
         {"spec", {{"targetRef", {{"kind", "Prometheus"}, {"name", "main"}}}, {"shards", shards}}}};
  if (!spec_patch.is_null()) j["spec"].merge_patch(spec_patch);  // {} arrives as null
  return j;
}

inline Json retainPolicy(const std::string& when, const std::string& period = "") {
  Json p{{"shardRetentionPolicy", {{"whenScaled", when}}}};
  if (!period.empty()) p["shardRetentionPolicy"]["retain"] = {{"retentionPeriod", period}};
  return p;
}

inline Json targetJson(int64_t shards, const Json& spec_patch = Json::object(),
                       const std::string& kind = "Prometheus") {
  Json j{{"apiVersion",
          kind == "Prometheus" ? "monitoring.coreos.com/v1" : "monitoring.coreos.com/v1alpha1"},
         {"kind", kind},
         {"metadata",
          {{"name", "main"},
           {"namespace", kNamespace},
           {"uid", kTargetUid},
           {"resourceVersion", "1001"},
           {"generation", 7},
           {"annotations", {{"shardscaler.io/claimed-by", "main"}}}}},
         {"spec", {{"shards", shards}, {"replicas", 2}}}};
  if (!spec_patch.is_null()) j["spec"].merge_patch(spec_patch);  // {} arrives as null
  return j;
}

// Paused (by `who` when not empty); the operator's status acknowledges it.
inline Json pausedBy(Json target, const std::string& who) {
  target["spec"]["paused"] = true;
  if (!who.empty()) target["metadata"]["annotations"]["shardscaler.io/paused-by"] = who;
  target["status"] = {{"paused", true},
                      {"conditions",
                       {{{"type", "Available"}, {"observedGeneration", 7}},
                        {{"type", "Reconciled"}, {"observedGeneration", 7}}}}};
  return target;
}

inline Json withAnnotation(Json object, const std::string& key, const Json& value) {
  object["metadata"]["annotations"][key] = value;
  return object;
}

inline std::string stsName(int index, const std::string& prefix = "prometheus-main") {
  return index == 0 ? prefix : prefix + "-shard-" + std::to_string(index);
}

// A StatefulSet as the operator creates it for shard `index`.
inline Json attachedSts(int index, const std::string& kind = "Prometheus") {
  const bool server = kind == "Prometheus";
  const std::string prefix = server ? "prometheus-main" : "prom-agent-main";
  return Json{
      {"apiVersion", "apps/v1"},
      {"kind", "StatefulSet"},
      {"metadata",
       {{"name", stsName(index, prefix)},
        {"namespace", kNamespace},
        {"uid", "sts-uid-" + std::to_string(index)},
        {"resourceVersion", std::to_string(500 + index)},
        {"labels",
         {{"app.kubernetes.io/managed-by", "prometheus-operator"},
          {"shardscaler.io/shardset", "main"},
          {"operator.prometheus.io/name", "main"},
          {"operator.prometheus.io/shard", std::to_string(index)},
          {"operator.prometheus.io/mode", server ? "server" : "agent"}}},
        {"ownerReferences", Json::array({{{"apiVersion", server ? "monitoring.coreos.com/v1"
                                                                : "monitoring.coreos.com/v1alpha1"},
                                          {"kind", kind},
                                          {"name", "main"},
                                          {"uid", kTargetUid},
                                          {"controller", true}}})}}},
      {"spec", {{"replicas", 2}}}};
}

// A StatefulSet this ShardSet detached; deadline "" leaves the annotation out.
inline Json retainedSts(int index, const std::string& deadline) {
  Json j = attachedSts(index);
  auto& md = j["metadata"];
  md["labels"].erase("operator.prometheus.io/name");
  md["labels"]["shardscaler.io/retained"] = "true";
  md["labels"]["shardscaler.io/shardset"] = "main";
  md["annotations"]["shardscaler.io/detached-labels"] = R"({"operator.prometheus.io/name":"main"})";
  if (!deadline.empty()) md["annotations"]["operator.prometheus.io/deletion-timestamp"] = deadline;
  return j;
}

inline std::vector<Json> attachedRange(int from, int to) {
  std::vector<Json> out;
  for (int i = from; i < to; ++i) out.push_back(attachedSts(i));
  return out;
}

inline std::vector<Json> operator+(std::vector<Json> a, const std::vector<Json>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

struct World {
  Json shard_set;
  std::optional<Json> target;
  std::vector<Json> stateful_sets;
  system_clock::time_point now = fixedNow();
  // The admission guard is enforced (most tables); false: the fallback's gates apply.
  bool guarded = true;
  std::chrono::nanoseconds settle = std::chrono::seconds(10);
  PlanPurpose purpose = PlanPurpose::Converge;
  bool hold = false;
  std::optional<bool> claim_holder_exists;
  std::map<std::string, DrainReading, std::less<>> drain_readings;
  TransitionSafety safety() const {
    return {.guard_enforced = guarded,
            .settle_time = settle,
            .pause_ack_timeout = std::chrono::seconds(30)};
  }

  PlanInput input() const;
};

// "claim", "label 2", "unlabel 2", "pause", "detach 3", "reattach 2", "update shards=3 unpause",
// "update unpause", "update clear-paused-by", "update release-claim", "delete 4".
std::string step(const Action& action);
std::vector<std::string> steps(const Plan& plan);
// The plan's action of that type (and shard index, when given); throws when there is none.
const Action& only(const Plan& plan, ActionType type, int index = -1);
const Condition& condition(const Plan& plan, std::string_view type);
std::string rfc3339(system_clock::time_point t);

}  // namespace shardscaler::retention::testing
