// The controller's informer caches (ShardSetCaches) over the FakeKubeClient of k8s_testing, started
// and synced, for the unit tests of the classes that read them: the event mapper and the reader.
// The caches' own event handlers queue nothing; a test calls the class under test itself.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "shardscaler/controller/expectations.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_testing/fake_kube_client.h"

#include "shard_set_caches.h"
#include "shard_set_event_mapper.h"

namespace shardscaler::controller::testing {

class CachesTest : public ::testing::Test {
 protected:
  // Starts the informers of kCachesNs without waiting for them.
  void startCachesUnsynced() { caches_.start(idle_mapper_); }

  // Starts the informers of kCachesNs and waits (bounded, real time) until they synced.
  void startCaches() {
    startCachesUnsynced();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!caches_.hasSynced()) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the informers did not sync";
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  // Returns once the caches hold every change made so far (the watches are not held).
  void awaitCaches() {
    ASSERT_TRUE(fake_.awaitWatchesDelivered(kWatches)) << "the informers fell behind";
  }

  void TearDown() override {
    fake_.stopWatches();
    caches_.stop();
  }

  static constexpr const char* kCachesNs = "monitoring";
  // ShardSets, Prometheuses, PrometheusAgents and StatefulSets of one namespace.
  static constexpr std::size_t kWatches = 4;

  k8s::ManualClock clock_;
  k8s::testing::FakeKubeClient fake_{&clock_};
  ShardSetCaches caches_{fake_, clock_, nullptr, {.namespaces = {kCachesNs}}};

 private:
  Expectations idle_writes_;
  ShardSetEventMapper idle_mapper_{idle_writes_, caches_, [](const std::string&) {}};
};

}  // namespace shardscaler::controller::testing
