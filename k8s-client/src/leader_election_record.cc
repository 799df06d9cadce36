#include "shardscaler/k8s_client/leader_election_record.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <string>

namespace shardscaler::k8s {

Json toLeaseSpec(const LeaderElectionRecord& record) {
  return Json{{"holderIdentity", record.holder_identity},
              {"leaseDurationSeconds", record.lease_duration_seconds},
              {"acquireTime", formatMicroTime(record.acquire_time)},
              {"renewTime", formatMicroTime(record.renew_time)},
              {"leaseTransitions", record.leader_transitions}};
}

Result<LeaderElectionRecord> fromLeaseSpec(const Json& spec) {
  LeaderElectionRecord record;
  if (spec.is_null()) return record;
  if (!spec.is_object()) return makeError(ErrorKind::Decode, "Lease spec is not an object");
  auto field = [&](const char* name) -> const Json* {
    auto it = spec.find(name);
    return it == spec.end() || it->is_null() ? nullptr : &*it;
  };
  if (const auto* holder = field("holderIdentity")) {
    if (!holder->is_string()) return makeError(ErrorKind::Decode, "holderIdentity not a string");
    record.holder_identity = holder->get<std::string>();
  }
  if (const auto* duration = field("leaseDurationSeconds")) {
    if (!duration->is_number_integer()) {
      return makeError(ErrorKind::Decode, "leaseDurationSeconds not an integer");
    }
    record.lease_duration_seconds = duration->get<int>();
  }
  if (const auto* transitions = field("leaseTransitions")) {
    if (!transitions->is_number_integer()) {
      return makeError(ErrorKind::Decode, "leaseTransitions not an integer");
    }
    record.leader_transitions = transitions->get<int>();
  }
  for (auto [name, target] : {std::pair{"acquireTime", &record.acquire_time},
                              std::pair{"renewTime", &record.renew_time}}) {
    if (const auto* value = field(name)) {
      if (!value->is_string())
        return makeError(ErrorKind::Decode, std::string(name) + " not a string");
      auto parsed = parseMicroTime(value->get_ref<const std::string&>());
      if (!parsed) return std::unexpected(parsed.error());
      *target = *parsed;
    }
  }
  return record;
}

}  // namespace shardscaler::k8s
