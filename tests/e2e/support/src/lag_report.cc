#include "lag_report.h"

#include <fmt/format.h>

#include <fstream>
#include <set>

namespace shardscaler::e2e {
const Json& labelsOf(const Json& o) {
  static const Json empty = Json::object();
  const Json& m = o.value("metadata", Json::object());
  return m.contains("labels") ? o["metadata"]["labels"] : empty;
}
const Json& annotationsOf(const Json& o) {
  static const Json empty = Json::object();
  const Json& m = o.value("metadata", Json::object());
  return m.contains("annotations") ? o["metadata"]["annotations"] : empty;
}
bool attached(const Json& sts) { return labelsOf(sts).contains("operator.prometheus.io/name"); }
bool retained(const Json& sts) {
  return labelsOf(sts).value("shardscaler.io/retained", "") == "true";
}
std::string metadataText(const Json& o, const char* key) {
  const Json& m = o.value("metadata", Json::object());
  return m.contains(key) && m[key].is_string() ? m[key].get<std::string>() : std::string();
}
bool beingDeleted(const Json& o) {
  return o.contains("metadata") && o["metadata"].contains("deletionTimestamp");
}

namespace {

// What the invariants look at: for a StatefulSet whether it is attached or retained, its deadline
// and detach time, whether it is being deleted; for the target its spec and pause annotations.
std::string stateText(const HistoryEvent& e) {
  const Json& a = annotationsOf(e.object);
  auto annotation = [&](const char* key) { return a.value(key, std::string("-")); };
  if (e.kind == HistoryKind::Target) {
    return "spec=" + e.object.value("spec", Json::object()).dump() +
           " paused-by=" + annotation("shardscaler.io/paused-by") +
           " paused-at=" + annotation("shardscaler.io/paused-at");
  }
  std::string out = attached(e.object) ? "attached" : "detached";
  if (retained(e.object)) out += " retained";
  out += " deadline=" + annotation("operator.prometheus.io/deletion-timestamp") +
         " detached-at=" + annotation("shardscaler.io/detached-at");
  if (beingDeleted(e.object)) {
    out += " deletionTimestamp=" + metadataText(e.object, "deletionTimestamp");
  }
  return out;
}

}  // namespace

std::string lagEvidence(const LagEvidenceInput& in) {
  std::set<std::string> names;
  for (const auto& v : in.violations) {
    for (const auto& e : in.events) {
      const std::string name = metadataText(e.object, "name");
      if (e.kind == HistoryKind::StatefulSet &&
          v.message.find("StatefulSet " + name + " ") != std::string::npos) {
        names.insert(name);
      }
    }
  }
  std::string out = "history (t, revision, object):\n";
  for (const auto& e : in.events) {
    const std::string name = metadataText(e.object, "name");
    // With no StatefulSet named (a pause or convergence violation), every event counts.
    if (e.kind == HistoryKind::StatefulSet && !names.empty() && !names.contains(name)) continue;
    const char* type = e.type == k8s::WatchEventType::Added      ? "ADDED"
                       : e.type == k8s::WatchEventType::Modified ? "MODIFIED"
                                                                 : "DELETED";
    out += fmt::format("  t={:7.3f}s rv={} {}{} {} {}\n",
                       std::chrono::duration<double>(e.seen - in.started).count(), e.revision, type,
                       e.from_relist ? " (relist)" : "", name, stateText(e));
  }
  out += "the operator emulator's StatefulSet writes:\n";
  for (const auto& a : in.operator_actions) {
    if (a.kind == "StatefulSet" && (names.empty() || names.contains(a.name))) {
      out += "  " + a.raw.dump() + "\n";
    }
  }
  out += "shardscaler's applied actions:\n";
  std::ifstream log(in.shardscaler_log);
  for (std::string line; std::getline(log, line);) {
    if (line.find(" applied key=") != std::string::npos) out += "  " + line + "\n";
  }
  return out;
}

}  // namespace shardscaler::e2e
