// LeaderElector against the fake API server's Lease (resourceVersion preconditions):
// acquire, renew, observe, lose, release, takeover, conflicts.
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "cache_test_support.h"
#include "shardscaler/k8s_client/leader_elector.h"
#include "shardscaler/test_kit/eventually.h"

namespace shardscaler::k8s {
namespace {

using namespace std::chrono_literals;
using cachetest::EventLog;
using testing::FakeKubeClient;
using testing::statusError;
using testing::Verb;

bool contains(const EventLog& log, const std::string& entry) {
  auto entries = log.entries();
  return std::find(entries.begin(), entries.end(), entry) != entries.end();
}

class LeaderElectorTest : public ::testing::Test {
 protected:
  struct Candidate {
    EventLog log;
    std::unique_ptr<LeaderElector> elector;
  };

  std::unique_ptr<Candidate> candidate(const std::string& identity, bool release = true) {
    auto c = std::make_unique<Candidate>();
    LeaderElectionConfig config;
    config.lease_namespace = "kube-system";
    config.lease_name = "shardscaler";
    config.identity = identity;
    config.release_on_cancel = release;
    auto* log = &c->log;
    config.callbacks.on_started_leading = [log] { log->push("started"); };
    config.callbacks.on_stopped_leading = [log] { log->push("stopped"); };
    config.callbacks.on_new_leader = [log](const std::string& id) { log->push("leader:" + id); };
    c->elector = std::make_unique<LeaderElector>(server_, std::move(config), clock_);
    return c;
  }
  Json lease() {
    auto l = server_.find(resources::leases(), "kube-system", "shardscaler");
    EXPECT_TRUE(l.has_value());
    return l ? *l : Json::object();
  }
  bool awaitEntry(const EventLog& log, const std::string& entry) {
    return test_kit::eventually(5s, [&] { return contains(log, entry); });
  }
  // Moves the clock from wait to wait until `done` holds; false after `max_steps` waits.
  // Before each step, `waiters` threads must be waiting, so none lags behind the clock.
  template <typename Pred>
  bool advanceUntil(Pred done, std::size_t waiters = 1, int max_steps = 40) {
    for (int i = 0; i < max_steps; ++i) {
      // Either the condition holds or the threads wait on the clock (none: finished).
      bool waiting = test_kit::eventually(5s, [&] {
        return done() ||
               (clock_.awaitWaiters(waiters, 0ms) && clock_.awaitNextDeadline(0ms).has_value());
      });
      if (done()) return true;
      if (!waiting) return false;
      clock_.advanceToNextDeadline();
    }
    return done();
  }

  FakeKubeClient server_;
  ManualClock clock_;
};

TEST_F(LeaderElectorTest, AcquiresAFreshLeaseThenRenewsItEveryRetryPeriod) {
  auto a = candidate("a");
  a->elector->start();
  ASSERT_TRUE(a->log.awaitSize(2));
  EXPECT_EQ(a->log.entries(), (std::vector<std::string>{"leader:a", "started"}));
  EXPECT_TRUE(a->elector->isLeader());
  EXPECT_EQ(a->elector->currentLeader(), "a");

  auto acquired = lease();
  EXPECT_EQ(acquired["kind"], "Lease");
  EXPECT_EQ(acquired["spec"]["holderIdentity"], "a");
  EXPECT_EQ(acquired["spec"]["leaseDurationSeconds"], 15);
  EXPECT_EQ(acquired["spec"]["leaseTransitions"], 0);
  EXPECT_EQ(acquired["spec"]["acquireTime"], formatMicroTime(clock_.now()));
  EXPECT_EQ(acquired["spec"]["renewTime"], acquired["spec"]["acquireTime"]);

  auto wait = clock_.awaitNextDeadline(5s);
  ASSERT_TRUE(wait);
  EXPECT_EQ(*wait - clock_.monotonicNow(), 2s);
  clock_.advance(2s);
  ASSERT_TRUE(test_kit::eventually(
      5s, [&] { return lease()["spec"]["renewTime"] == formatMicroTime(clock_.now()); }));
  auto renewed = lease();
  EXPECT_EQ(renewed["spec"]["acquireTime"], acquired["spec"]["acquireTime"]);
  EXPECT_EQ(renewed["spec"]["leaseTransitions"], 0);
  EXPECT_NE(renewed["metadata"]["resourceVersion"], acquired["metadata"]["resourceVersion"]);
  EXPECT_TRUE(a->elector->isLeader());
  EXPECT_EQ(a->log.entries().size(), 2u) << "a renewal is not a new leader";
}

TEST_F(LeaderElectorTest, ACandidateObservesTheHolderAndWaits) {
  auto a = candidate("a");
  a->elector->start();
  ASSERT_TRUE(awaitEntry(a->log, "started"));
  auto b = candidate("b");
  b->elector->start();
  ASSERT_TRUE(awaitEntry(b->log, "leader:a"));
  EXPECT_FALSE(b->elector->isLeader());
  EXPECT_EQ(b->elector->currentLeader(), "a");
  // Ten seconds of A renewing: B never takes over.
  auto start = clock_.monotonicNow();
  ASSERT_TRUE(advanceUntil([&] { return clock_.monotonicNow() - start >= 10s; }, 2));
  EXPECT_TRUE(a->elector->isLeader());
  EXPECT_FALSE(b->elector->isLeader());
  EXPECT_FALSE(contains(b->log, "started"));
  EXPECT_EQ(lease()["spec"]["holderIdentity"], "a");
}

TEST_F(LeaderElectorTest, TakesOverALeaseNotRenewedForItsDuration) {
  auto a = candidate("a", /*release=*/false);
  a->elector->start();
  ASSERT_TRUE(awaitEntry(a->log, "started"));
  a->elector->stop();  // gone without a release: the lease stays held by "a"
  EXPECT_EQ(lease()["spec"]["holderIdentity"], "a");
  EXPECT_EQ(a->log.entries().back(), "stopped");

  auto b = candidate("b");
  auto start = clock_.monotonicNow();
  b->elector->start();
  ASSERT_TRUE(advanceUntil([&] { return contains(b->log, "started"); }));
  auto waited = clock_.monotonicNow() - start;
  EXPECT_GE(waited, 15s) << "took over a lease that had not expired";
  EXPECT_LT(waited, 15s + 4400ms);
  auto taken = lease();
  EXPECT_EQ(taken["spec"]["holderIdentity"], "b");
  EXPECT_EQ(taken["spec"]["leaseTransitions"], 1);
  EXPECT_EQ(taken["spec"]["acquireTime"], formatMicroTime(clock_.now()));
  EXPECT_EQ(b->log.entries(), (std::vector<std::string>{"leader:a", "leader:b", "started"}));
}

TEST_F(LeaderElectorTest, ReleaseOnStopLetsTheNextCandidateAcquireAtItsNextRetry) {
  auto a = candidate("a");
  a->elector->start();
  ASSERT_TRUE(awaitEntry(a->log, "started"));
  auto b = candidate("b");
  b->elector->start();
  ASSERT_TRUE(awaitEntry(b->log, "leader:a"));
  ASSERT_TRUE(clock_.awaitWaiters(2, 5s));

  a->elector->stop();
  EXPECT_FALSE(a->elector->isLeader());
  EXPECT_TRUE(a->elector->finished());
  EXPECT_EQ(a->log.entries().back(), "stopped");
  auto released = lease();
  EXPECT_EQ(released["spec"]["holderIdentity"], "");
  EXPECT_EQ(released["spec"]["leaseDurationSeconds"], 1);
  EXPECT_EQ(released["spec"]["leaseTransitions"], 0);
  EXPECT_EQ(released["spec"]["renewTime"], formatMicroTime(clock_.now()));
  EXPECT_EQ(released["spec"]["acquireTime"], formatMicroTime(clock_.now()));

  auto start = clock_.monotonicNow();
  ASSERT_TRUE(advanceUntil([&] { return contains(b->log, "started"); }));
  EXPECT_LE(clock_.monotonicNow() - start, 4400ms) << "B waited for the old lease to expire";
  EXPECT_EQ(lease()["spec"]["holderIdentity"], "b");
  EXPECT_EQ(lease()["spec"]["leaseTransitions"], 1);
}

TEST_F(LeaderElectorTest, LosesLeadershipWhenRenewalsFailUntilTheRenewDeadline) {
  auto a = candidate("a");
  a->elector->start();
  ASSERT_TRUE(awaitEntry(a->log, "started"));
  auto start = clock_.monotonicNow();
  server_.failNext({.verb = Verb::Get}, FakeKubeClient::kEveryCall, statusError(503, "down"));
  server_.failNext({.verb = Verb::Update}, FakeKubeClient::kEveryCall, statusError(503, "down"));
  ASSERT_TRUE(advanceUntil([&] { return a->elector->finished(); }));
  EXPECT_EQ(a->log.entries().back(), "stopped");
  EXPECT_FALSE(a->elector->isLeader());
  // The last renewal round starts 2 s after the last success and gives up 10 s later.
  auto lost_after = clock_.monotonicNow() - start;
  EXPECT_GE(lost_after, 10s);
  EXPECT_LE(lost_after, 12s);
  EXPECT_LT(lost_after, 15s) << "must step down before anyone else may take over";
}

TEST_F(LeaderElectorTest, IsLeaderTurnsFalseOnceTheLastRenewalIsOlderThanTheRenewDeadline) {
  auto a = candidate("a");
  a->elector->start();
  ASSERT_TRUE(awaitEntry(a->log, "started"));
  auto start = clock_.monotonicNow();
  server_.failNext({.verb = Verb::Get}, FakeKubeClient::kEveryCall,
                   makeError(ErrorKind::Transport, "connection refused").error());
  ASSERT_TRUE(advanceUntil([&] { return clock_.monotonicNow() - start >= 10s; }));
  EXPECT_FALSE(a->elector->isLeader());
}

TEST_F(LeaderElectorTest, StepsDownAtOnceWhenTheLeaseNamesAnotherHolder) {
  auto a = candidate("a");
  a->elector->start();
  ASSERT_TRUE(awaitEntry(a->log, "started"));
  auto stolen = lease();
  stolen["spec"]["holderIdentity"] = "intruder";
  server_.put(resources::leases(), stolen);
  ASSERT_TRUE(clock_.awaitNextDeadline(5s));
  clock_.advanceToNextDeadline();  // next renewal sees it
  ASSERT_TRUE(awaitEntry(a->log, "stopped"));
  EXPECT_TRUE(contains(a->log, "leader:intruder"));
  EXPECT_FALSE(a->elector->isLeader());
  EXPECT_EQ(lease()["spec"]["holderIdentity"], "intruder") << "nothing released for others";
}

TEST_F(LeaderElectorTest, AConflictingWriteIsRereadAtOnce) {
  auto a = candidate("a");
  a->elector->start();
  ASSERT_TRUE(awaitEntry(a->log, "started"));
  ASSERT_TRUE(clock_.awaitNextDeadline(5s));
  auto updates_before = server_.calls({.verb = Verb::Update}).size();
  server_.failNext({.verb = Verb::Update}, 1, statusError(409, "the object has been modified"));
  clock_.advance(2s);
  ASSERT_TRUE(test_kit::eventually(
      5s, [&] { return lease()["spec"]["renewTime"] == formatMicroTime(clock_.now()); }));
  EXPECT_EQ(server_.calls({.verb = Verb::Update}).size(), updates_before + 2);
  EXPECT_TRUE(a->elector->isLeader());
}

TEST_F(LeaderElectorTest, AStaleResourceVersionNeverOverwritesAnotherWrite) {
  // B read the lease, then A renewed: B's write carries a stale resourceVersion.
  auto a = candidate("a");
  a->elector->start();
  ASSERT_TRUE(awaitEntry(a->log, "started"));
  auto stale = lease();
  ASSERT_TRUE(clock_.awaitNextDeadline(5s));
  clock_.advanceToNextDeadline();
  ASSERT_TRUE(test_kit::eventually(5s, [&] {
    return lease()["metadata"]["resourceVersion"] != stale["metadata"]["resourceVersion"];
  }));
  stale["spec"]["holderIdentity"] = "b";
  auto result = server_.update(resources::leases(), "kube-system", stale);
  ASSERT_FALSE(result.has_value());
  EXPECT_TRUE(result.error().is(ErrorKind::Conflict));
}

TEST_F(LeaderElectorTest, TwoCandidatesStartingTogetherNeverBothLead) {
  auto a = candidate("a");
  auto b = candidate("b");
  a->elector->start();
  b->elector->start();
  ASSERT_TRUE(test_kit::eventually(
      5s, [&] { return contains(a->log, "started") || contains(b->log, "started"); }));
  // Thirty seconds in step with both (a leader starved of CPU past its lease would lose it).
  auto start = clock_.monotonicNow();
  bool both = false;
  ASSERT_TRUE(advanceUntil(
      [&] {
        both = both || (a->elector->isLeader() && b->elector->isLeader());
        return clock_.monotonicNow() - start >= 30s;
      },
      2));
  EXPECT_FALSE(both);
  EXPECT_NE(contains(a->log, "started"), contains(b->log, "started"));
}

TEST_F(LeaderElectorTest, StopBeforeAcquiringReleasesNothing) {
  auto a = candidate("a");
  a->elector->start();
  ASSERT_TRUE(awaitEntry(a->log, "started"));
  auto b = candidate("b");
  b->elector->start();
  ASSERT_TRUE(awaitEntry(b->log, "leader:a"));
  b->elector->stop();
  EXPECT_FALSE(contains(b->log, "stopped")) << "never started, so never stopped";
  EXPECT_EQ(lease()["spec"]["holderIdentity"], "a");
}

TEST_F(LeaderElectorTest, RejectsTimingsThatCannotWork) {
  LeaderElectionConfig config;
  config.lease_name = "l";
  config.identity = "a";
  config.renew_deadline = 15s;  // == lease duration
  EXPECT_THROW(LeaderElector(server_, config, clock_), std::invalid_argument);
  config.renew_deadline = 2s;  // < 1.2 x retry period
  EXPECT_THROW(LeaderElector(server_, config, clock_), std::invalid_argument);
  config.renew_deadline = 10s;
  config.identity = "";
  EXPECT_THROW(LeaderElector(server_, config, clock_), std::invalid_argument);
}

}  // namespace
}  // namespace shardscaler::k8s
