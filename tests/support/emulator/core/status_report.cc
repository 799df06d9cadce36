#include "status_report.h"

#include <ctime>
#include <set>

#include "shard_naming.h"

namespace shardscaler::emulator {

namespace {

std::string combinedStatus(const std::vector<std::string>& statuses) {
  std::string status;
  for (const auto& s : statuses) {
    if (s == "False") return "False";
    if (s == "Degraded") status = "Degraded";
    if (s == "Unknown" && status.empty()) status = "Unknown";
  }
  return status.empty() ? "True" : status;
}

std::string combinedReason(const std::vector<std::string>& reasons) {
  std::set<std::string> unique;
  for (const auto& r : reasons) {
    if (!r.empty()) unique.insert(r);
  }
  std::string out;
  for (const auto& r : unique) out += out.empty() ? r : "And" + r;
  return out;
}

std::string podMessage(const Json& pod) {
  const Json conditions = objectField(pod, "status").value("conditions", Json::array());
  for (const char* type : {"PodScheduled", "Initialized", "ContainersReady", "Ready"}) {
    for (const auto& c : conditions) {
      if (c.value("type", "") == type && c.value("status", "") == "False") {
        return c.value("message", "");
      }
    }
  }
  return "";
}

Json withTransitionTime(Json condition, const Json& previous_status, const std::string& now) {
  condition["lastTransitionTime"] = now;
  for (const auto& old : previous_status.value("conditions", Json::array())) {
    if (old.value("type", "") == condition.value("type", "") &&
        old.value("status", "") == condition.value("status", "")) {
      condition["lastTransitionTime"] = old.value("lastTransitionTime", now);
    }
  }
  return condition;
}

}  // namespace

bool podReady(const Json& pod) {
  const Json status = objectField(pod, "status");
  if (status.value("phase", "") != "Running") return false;
  for (const auto& c : status.value("conditions", Json::array())) {
    if (c.value("type", "") == "Ready") return c.value("status", "") == "True";
  }
  return false;
}

std::string rfc3339(std::chrono::system_clock::time_point t) {
  std::time_t seconds = std::chrono::system_clock::to_time_t(t);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

Json buildStatusPatch(const TargetKind& kind, const Json& target,
                      const std::vector<ShardObservation>& shards,
                      const std::optional<ReconcileOutcome>& last_reconcile,
                      std::chrono::system_clock::time_point now) {
  const Json& meta = objectField(target, "metadata");
  const Json spec = objectField(target, "spec");
  const Json previous = objectField(target, "status");
  const long long generation = meta.value("generation", 0LL);
  const std::string now_text = rfc3339(now);
  // Process() compares with spec.replicas as given (default 1), not normalized.
  const long long expected_replicas =
      spec.contains("replicas") && spec["replicas"].is_number_integer()
          ? spec["replicas"].get<long long>()
          : 1;

  long long replicas = 0, updated = 0, available = 0, unavailable = 0;
  std::vector<std::string> statuses, reasons, messages;
  Json shard_statuses = Json::array();
  for (const auto& shard : shards) {
    if (!shard.statefulset) {
      statuses.emplace_back("False");
      reasons.emplace_back("StatefulSetNotFound");
      messages.emplace_back("shard " + std::to_string(shard.shard) + ": statefulset " +
                            meta.value("namespace", "") + "/" + shard.statefulset_name +
                            " not found");
      shard_statuses.emplace_back(Json{{"shardID", std::to_string(shard.shard)},
                                       {"replicas", 0},
                                       {"updatedReplicas", 0},
                                       {"availableReplicas", 0},
                                       {"unavailableReplicas", 0}});
      continue;
    }
    if (deletionInProgress(*shard.statefulset)) continue;
    const std::string update_revision =
        objectField(*shard.statefulset, "status").value("updateRevision", "");
    long long ready = 0, up_to_date = 0;
    for (const auto& pod : shard.pods) {
      if (podReady(pod)) ++ready;
      if (stringMap(pod, "labels")["controller-revision-hash"] == update_revision) ++up_to_date;
    }
    const long long count = static_cast<long long>(shard.pods.size());
    replicas += count;
    updated += up_to_date;
    available += ready;
    unavailable += count - ready;
    shard_statuses.emplace_back(Json{{"shardID", std::to_string(shard.shard)},
                                     {"replicas", count},
                                     {"updatedReplicas", up_to_date},
                                     {"availableReplicas", ready},
                                     {"unavailableReplicas", count - ready}});
    if (ready >= expected_replicas) {
      statuses.emplace_back("True");
      reasons.emplace_back("");
      continue;
    }
    statuses.emplace_back(ready == 0 ? "False" : "Degraded");
    reasons.emplace_back(ready == 0 ? "NoPodReady" : "SomePodsNotReady");
    for (const auto& pod : shard.pods) {
      if (auto m = podMessage(pod); !m.empty()) {
        messages.emplace_back("shard " + std::to_string(shard.shard) + ": pod " +
                              objectField(pod, "metadata").value("name", "") + ": " + m);
      }
    }
  }

  std::string joined;
  for (const auto& m : messages) joined += joined.empty() ? m : "\n" + m;
  Json available_condition{{"type", "Available"},
                           {"status", combinedStatus(statuses)},
                           {"reason", combinedReason(reasons)},
                           {"message", joined},
                           {"observedGeneration", generation}};
  Json reconciled{{"type", "Reconciled"}, {"observedGeneration", generation}};
  if (!last_reconcile) {
    reconciled["status"] = "Unknown";
    reconciled["reason"] = "NotFound";
    reconciled["message"] =
        "object \"" + meta.value("namespace", "") + "/" + meta.value("name", "") + "\" not found";
  } else if (last_reconcile->ok) {
    reconciled["status"] = "True";
    reconciled["reason"] = "";
    reconciled["message"] = "";
  } else {
    reconciled["status"] = "False";
    reconciled["reason"] = "ReconciliationFailed";
    reconciled["message"] = last_reconcile->message;
  }

  return Json{
      {"status",
       {{"paused", spec.value("paused", false)},
        {"replicas", replicas},
        {"updatedReplicas", updated},
        {"availableReplicas", available},
        {"unavailableReplicas", unavailable},
        {"conditions", Json::array({withTransitionTime(available_condition, previous, now_text),
                                    withTransitionTime(reconciled, previous, now_text)})},
        {"shardStatuses", shard_statuses},
        {"shards", specShardsOrOne(target)},
        {"selector", selectorString(selectorLabels(kind, meta.value("name", "")))}}}};
}

}  // namespace shardscaler::emulator
