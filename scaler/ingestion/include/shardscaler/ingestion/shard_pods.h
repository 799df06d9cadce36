// Which pods of a shard's StatefulSet shardscaler reads, and where (docs/design.md §4): only pods
// the StatefulSet controls (its controller ownerReference, its selector, a name <sts>-<ordinal>),
// only on their declared web port. Pure: it reads the objects it is given and fetches nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace shardscaler::ingestion {

// The operator's name of the Prometheus container's port (the target's spec.portName default).
inline constexpr std::string_view kWebPortName = "web";

// Whether a process may run in a pod, from its status.
enum class PodRun {
  Running,     // phase Running: its Prometheus must be read
  NotStarted,  // phase Pending, no container ever started: no process holds anything
  Ended,       // phase Succeeded or Failed: its processes ended
  Unknown,     // phase Unknown, missing, or a Pending pod whose containers did start
};
std::string_view toString(PodRun run);

struct ShardPod {
  std::string name;
  std::string uid;
  int32_t ordinal = 0;
  std::string ip;                    // status.podIP; "" while it has none
  std::optional<uint16_t> web_port;  // the container port named `web`
  PodRun run = PodRun::Unknown;
  bool terminating = false;  // metadata.deletionTimestamp is set

  // Its processes may hold unshipped samples: it runs, may run, or is shutting down.
  bool mayRun() const { return run == PodRun::Running || run == PodRun::Unknown || terminating; }
};

// A shard StatefulSet and the pods it controls.
struct ShardPods {
  std::string stateful_set;
  std::string uid;
  int32_t replicas = 1;        // spec.replicas (1 when absent, as the API server defaults it)
  bool keeps_volumes = false;  // spec.volumeClaimTemplates is not empty
  std::vector<ShardPod> pods;  // by ordinal
  // Pods named like its own that it does not control, with why: they are never read.
  std::vector<std::string> foreign;
  std::string problem;  // why the StatefulSet itself cannot be read ("" when it can)
};

// The pods of `pods` that `stateful_set` controls: a controller ownerReference of kind
// StatefulSet with its uid, labels its spec.selector matches, and the name <sts>-<ordinal>
// (ordinal in decimal without a leading zero). Every other pod is left out (named in `foreign`
// when its name is one of the StatefulSet's). A port is taken only from the pod's spec, only
// the one named kWebPortName.
ShardPods shardPods(const nlohmann::json& stateful_set, std::span<const nlohmann::json> pods);

}  // namespace shardscaler::ingestion
