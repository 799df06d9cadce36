// ConnectionRegistry: room while under the cap, then the oldest idle connection gives way, then the
// oldest still handshaking, and only a registry of busy connections refuses.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "shardscaler/serving/connection_registry.h"

namespace shardscaler::serving {
namespace {

class FakeConnection final : public Connection {
 public:
  explicit FakeConnection(ConnectionPhase phase) : phase_(phase) {}
  ConnectionPhase phase() const override { return phase_; }
  void evict() override { evicted = true; }
  void shutdown() override { shut_down = true; }

  ConnectionPhase phase_;
  bool evicted = false;
  bool shut_down = false;
};

using Admission = ConnectionRegistry::Admission;

std::shared_ptr<FakeConnection> add(ConnectionRegistry& registry, ConnectionPhase phase) {
  auto c = std::make_shared<FakeConnection>(phase);
  registry.add(c);
  return c;
}

TEST(ConnectionRegistryTest, AdmitsUpToTheCap) {
  ConnectionRegistry registry(2);
  EXPECT_EQ(registry.makeRoom(), Admission::Admitted);
  auto a = add(registry, ConnectionPhase::Active);
  EXPECT_EQ(registry.makeRoom(), Admission::Admitted);
  auto b = add(registry, ConnectionPhase::Active);
  EXPECT_EQ(registry.makeRoom(), Admission::Refused);
  EXPECT_FALSE(a->evicted || b->evicted);
  b.reset();  // closed: forgotten
  EXPECT_EQ(registry.makeRoom(), Admission::Admitted);
  EXPECT_EQ(registry.size(), 1u);
}

TEST(ConnectionRegistryTest, TheOldestIdleGivesWayFirstThenTheOldestHandshake) {
  ConnectionRegistry registry(4);
  auto handshaking = add(registry, ConnectionPhase::Handshake);
  auto idle_old = add(registry, ConnectionPhase::Idle);
  auto busy = add(registry, ConnectionPhase::Active);
  auto idle_new = add(registry, ConnectionPhase::Idle);
  std::vector<std::shared_ptr<FakeConnection>> newcomers;  // busy at once
  EXPECT_EQ(registry.makeRoom(), Admission::Evicted);
  EXPECT_TRUE(idle_old->evicted);
  EXPECT_FALSE(idle_new->evicted || handshaking->evicted || busy->evicted);
  newcomers.push_back(add(registry, ConnectionPhase::Active));
  EXPECT_EQ(registry.makeRoom(), Admission::Evicted);
  EXPECT_TRUE(idle_new->evicted);
  newcomers.push_back(add(registry, ConnectionPhase::Active));
  EXPECT_EQ(registry.makeRoom(), Admission::Evicted);
  EXPECT_TRUE(handshaking->evicted);
  newcomers.push_back(add(registry, ConnectionPhase::Active));
  EXPECT_EQ(registry.makeRoom(), Admission::Refused);
  EXPECT_FALSE(busy->evicted);
}

TEST(ConnectionRegistryTest, ShutdownReachesEveryOpenConnection) {
  ConnectionRegistry registry(3);
  auto a = add(registry, ConnectionPhase::Idle);
  auto b = add(registry, ConnectionPhase::Active);
  registry.shutdownAll();
  EXPECT_TRUE(a->shut_down);
  EXPECT_TRUE(b->shut_down);
}

}  // namespace
}  // namespace shardscaler::serving
