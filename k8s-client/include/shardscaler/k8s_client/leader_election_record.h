// The leader-election state held in a coordination.k8s.io/v1 Lease spec, and its JSON form.
// Pure conversions: nothing here talks to a server or reads a clock.
#pragma once

#include <string>
#include <string_view>

#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/error.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/k8s_client/meta_time.h"

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

}  // namespace shardscaler::k8s
