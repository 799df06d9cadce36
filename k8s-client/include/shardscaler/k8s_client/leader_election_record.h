// The leader-election state held in a coordination.k8s.io/v1 Lease spec, and its JSON form.
// Pure conversions: nothing here talks to a server or reads a clock.
#pragma once

#include <string>
#include <string_view>

#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/error.h"
#include "shardscaler/k8s_client/kube_client.h"

namespace shardscaler::k8s {

struct LeaderElectionRecord {
  std::string holder_identity;  // "" = nobody holds the lease
  int lease_duration_seconds = 0;
  Clock::SystemTime acquire_time{};
  Clock::SystemTime renew_time{};
  int leader_transitions = 0;

  friend bool operator==(const LeaderElectionRecord&, const LeaderElectionRecord&) = default;
};

// Lease spec: holderIdentity, leaseDurationSeconds, acquireTime, renewTime (MicroTime),
// leaseTransitions.
Json toLeaseSpec(const LeaderElectionRecord& record);
// Missing fields read as empty/zero, as the API server omits them; wrong types are Decode.
Result<LeaderElectionRecord> fromLeaseSpec(const Json& spec);

// metav1.MicroTime: RFC 3339 in UTC with microseconds, "2006-01-02T15:04:05.000000Z".
std::string formatMicroTime(Clock::SystemTime t);
// Accepts any RFC 3339 time (fraction optional, "Z" or a +hh:mm offset).
Result<Clock::SystemTime> parseMicroTime(std::string_view text);

}  // namespace shardscaler::k8s
