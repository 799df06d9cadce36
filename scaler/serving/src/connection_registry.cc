#include "shardscaler/serving/connection_registry.h"

#include <algorithm>

namespace shardscaler::serving {

void ConnectionRegistry::forgetClosed() {
  std::erase_if(connections_, [](const auto& weak) { return weak.expired(); });
}

ConnectionRegistry::Admission ConnectionRegistry::makeRoom() {
  forgetClosed();
  if (connections_.size() < max_) return Admission::Admitted;
  // Idle first: a handshake in progress may be the API server's; an idle connection has at most
  // a client that opens it again.
  for (const ConnectionPhase victim : {ConnectionPhase::Idle, ConnectionPhase::Handshake}) {
    for (auto it = connections_.begin(); it != connections_.end(); ++it) {
      auto connection = it->lock();
      if (!connection || connection->phase() != victim) continue;
      connections_.erase(it);
      connection->evict();
      return Admission::Evicted;
    }
  }
  return Admission::Refused;
}

void ConnectionRegistry::add(std::weak_ptr<Connection> connection) {
  connections_.push_back(std::move(connection));
}

std::size_t ConnectionRegistry::size() {
  forgetClosed();
  return connections_.size();
}

void ConnectionRegistry::shutdownAll() {
  for (auto& weak : connections_) {
    if (auto connection = weak.lock()) connection->shutdown();
  }
}

}  // namespace shardscaler::serving
