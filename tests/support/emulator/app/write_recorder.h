// Records every write the emulated operator makes for a target: one action-log line (with the
// outcome, and the admission webhook when one refused it) and one log line. It never retries
// or changes a write; it only reports what the API server answered.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "action_log.h"
#include "shardscaler/k8s_client/error.h"

namespace shardscaler::emulator {

class WriteRecorder {
 public:
  // `target_kind` names the owner in each record ("Prometheus" -> owner "Prometheus/<name>").
  WriteRecorder(ActionLog& log, std::string target_kind)
      : log_(log), target_kind_(std::move(target_kind)) {}

  // One record of a write to `kind`/`name` on behalf of `target`.
  void record(const std::string& verb, const std::string& kind, const nlohmann::json& target,
              const std::string& name, std::optional<int> shard, const std::string& reason,
              const k8s::Result<nlohmann::json>& result, const std::string& subresource = {});

 private:
  ActionLog& log_;
  std::string target_kind_;
};

}  // namespace shardscaler::emulator
