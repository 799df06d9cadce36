#include "write_recorder.h"

#include <spdlog/spdlog.h>

#include "admission_refusal.h"
#include "shard_naming.h"

namespace shardscaler::emulator {

void WriteRecorder::record(const std::string& verb, const std::string& kind,
                           const nlohmann::json& target, const std::string& name,
                           std::optional<int> shard, const std::string& reason,
                           const k8s::Result<nlohmann::json>& result,
                           const std::string& subresource) {
  const Json& meta = objectField(target, "metadata");
  Action action{.verb = verb,
                .kind = kind,
                .ns = meta.value("namespace", ""),
                .name = name,
                .shard = shard,
                .subresource = subresource,
                .owner = target_kind_ + "/" + meta.value("name", ""),
                .reason = reason,
                .outcome = result ? "ok" : "error: " + result.error().describe()};
  const std::string object =
      action.ns + "/" + name + (subresource.empty() ? "" : "/" + subresource);
  if (result) {
    log_.record(action);
    spdlog::info("event=write verb={} kind={} object={} reason=\"{}\"", verb, kind, object, reason);
    return;
  }
  std::string refused_by;
  if (auto refusal = admissionRefusal(result.error())) {
    (refusal->denied ? action.denied_by : action.webhook_failed) = refusal->webhook;
    refused_by = refusal->webhook;
  }
  log_.record(action);
  spdlog::warn(
      "event=write_failed verb={} kind={} object={} reason=\"{}\" webhook=\"{}\" error=\"{}\"",
      verb, kind, object, reason, refused_by, result.error().describe());
}

}  // namespace shardscaler::emulator
