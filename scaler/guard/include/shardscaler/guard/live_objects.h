// The live reads a guard decision may need — the ShardSet, its target and the namespace — behind
// an interface, so that the decision is tested without a server. Reads only; never a write.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/planner/naming.h"

namespace shardscaler::guard {

// One read: the object, its absence (404), or why it could not be read.
struct LiveRead {
  enum class State { Found, Absent, Failed };
  State state = State::Absent;
  nlohmann::json object;  // when Found
  // When Failed: what went wrong ("Forbidden (403): ..."), for the log; a denial message names
  // only its kind (the part before the first space or colon).
  std::string error;

  static LiveRead found(nlohmann::json object) { return {State::Found, std::move(object), {}}; }
  static LiveRead absent() { return {State::Absent, nullptr, {}}; }
  static LiveRead failed(std::string error) { return {State::Failed, nullptr, std::move(error)}; }
};

class LiveObjects {
 public:
  virtual ~LiveObjects() = default;
  virtual LiveRead shardSet(const std::string& ns, const std::string& name) = 0;
  virtual LiveRead target(const std::string& ns, planner::TargetKind kind,
                          const std::string& name) = 0;
  virtual LiveRead namespaceObject(const std::string& name) = 0;
};

// Quorum GETs through the client: a cache could be as stale as the operator the guard guards
// against.
class KubeLiveObjects final : public LiveObjects {
 public:
  explicit KubeLiveObjects(k8s::KubeClient& client) : client_(client) {}
  LiveRead shardSet(const std::string& ns, const std::string& name) override;
  LiveRead target(const std::string& ns, planner::TargetKind kind,
                  const std::string& name) override;
  LiveRead namespaceObject(const std::string& name) override;

 private:
  k8s::KubeClient& client_;
};

}  // namespace shardscaler::guard
