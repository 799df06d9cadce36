// The scale benchmark's workload (issue 10): Prometheus targets with N shards each, their
// operator-shaped StatefulSets (replicas 0) and one ShardSet per target, spread over one or
// more namespaces, created with many requests in flight. Benchmarks only; it never deletes.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/testenv/control_plane.h"

namespace shardscaler::bench {

struct WorkloadShape {
  int namespaces = 1;
  int targets = 1000;
  int shards = 10;    // per target; the ShardSets ask for the same count (steady state)
  int parallel = 16;  // requests in flight while creating
};

// Target i lives in namespace "scale-<i % namespaces>" and is named "t-<i>"; its ShardSet too.
std::string workloadNamespace(const WorkloadShape& shape, int target);
std::string targetName(int target);

// Runs fn(0..count-1) on `parallel` threads. A call failing with a transient error (429, 5xx,
// transport, timeout) is retried up to 20 times; any other error, or the 21st, ends the run
// and is returned with the index.
k8s::Result<void> runParallel(int count, int parallel,
                              const std::function<k8s::Result<void>(int)>& fn);

struct CreatedWorkload {
  std::chrono::duration<double> took{};
  std::int64_t stateful_set_bytes = 0;  // JSON of every StatefulSet as the server returned it
  int stateful_sets = 0;
};

// The ShardSet CRD and the operator's (tests/support/crds), established; throws when kubectl
// cannot.
void installCrds(const testenv::ControlPlane& cp);

// Namespaces, targets and their StatefulSets; no ShardSets.
k8s::Result<CreatedWorkload> createTargetsAndShards(k8s::KubeClient& client,
                                                    const WorkloadShape& shape);
// One ShardSet per target (Retain, 1h), spec.shards = the target's shards.
k8s::Result<std::chrono::duration<double>> createShardSets(k8s::KubeClient& client,
                                                           const WorkloadShape& shape);
// Removes every ShardSet's status (status subresource), so that a restarted shardscaler's
// convergence can be seen; everything else stays as shardscaler left it.
k8s::Result<void> clearShardSetStatus(k8s::KubeClient& client, const WorkloadShape& shape);

}  // namespace shardscaler::bench
