// Two replicas of `shardscaler run --leader-elect` sharing a coordination.k8s.io/v1 Lease in the
// test's namespace, with the default timings (15 s / 10 s / 2 s): only the holder writes; after
// kill -9 of the holder the other takes over within 20 s; on SIGTERM the holder releases the
// Lease and the other acquires it at once. Both replicas are ready throughout.
#include <gmock/gmock.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>

#include "shardscaler/e2e/scenario.h"
#include "shardscaler/e2e/shardscaler_metrics.h"
#include "shardscaler/testenv/child_process.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream all;
  all << in.rdbuf();
  return all.str();
}

size_t countOf(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

class LeaderElectionTest : public ShardSetScenario {
 protected:
  // Replica a is the fixture's process; replica b is started by the test.
  std::vector<std::string> shardscalerArgs() const override { return replicaArgs("replica-a"); }

  std::vector<std::string> replicaArgs(const std::string& identity) const {
    return {"--leader-elect=true", "--leader-election-namespace=" + ns_, "--identity=" + identity};
  }

  void startReplicaB() {
    ShardscalerOptions options;
    options.kubeconfig = cluster().kubeconfigPath();
    options.namespaces = {ns_};
    options.extra_args = replicaArgs("replica-b");
    options.log_file = testLogDir() / "shardscaler-b.log";
    b_ = std::make_unique<ShardscalerProcess>(options);
  }

  void TearDown() override {
    if (HasFailure() && b_)
      std::cerr << "---- replica b log (tail) ----\n" << b_->logTail() << "\n";
    if (b_) {
      auto status = b_->terminate(15s);
      EXPECT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
          << "replica b did not exit 0 on SIGTERM";
    }
    ShardSetScenario::TearDown();
  }

  Json lease() const { return getOrNull(k8s::resources::leases(), ns_, "shardscaler"); }

  std::string holder() const {
    Json l = lease();
    if (!l.is_object()) return "<no lease>";
    return l["spec"].value("holderIdentity", "");
  }

  static bool ready(ShardscalerProcess& p) {
    return p.httpGet(p.probePort(), "/readyz").first == 200;
  }

  ::testing::AssertionResult waitForHolder(const std::string& identity, std::chrono::seconds t) {
    return waitFor(
        "Lease holder " + identity,
        [&](std::string* seen) {
          *seen = holder();
          return *seen == identity;
        },
        t);
  }

  // "applied" lines about this test's ShardSet in a log from `offset` on.
  size_t appliedSince(const ShardscalerProcess& p, size_t offset) const {
    const std::string log = readFile(p.logFile());
    return offset >= log.size() ? 0 : countOf(log.substr(offset), " applied key=" + ns_ + "/");
  }

  std::unique_ptr<ShardscalerProcess> b_;
};

TEST_F(LeaderElectionTest, OnlyTheHolderWritesAndTheOtherTakesOver) {
  ShardscalerProcess& a = *shardscaler_;
  // a alone: it acquires the Lease. Then b joins as the standby.
  ASSERT_TRUE(waitForHolder("replica-a", 30s));
  startReplicaB();
  ShardscalerProcess& b = *b_;
  ASSERT_TRUE(waitFor("both replicas ready", [&](std::string* seen) {
    *seen = "a: " + a.httpGet(a.probePort(), "/readyz").second +
            " b: " + b.httpGet(b.probePort(), "/readyz").second;
    return ready(a) && ready(b);
  }));
  ASSERT_TRUE(waitFor("b to see leader replica-a", [&](std::string*) {
    return readFile(b.logFile()).find("new leader leader=replica-a") != std::string::npos;
  }));
  EXPECT_EQ(holder(), "replica-a");
  EXPECT_EQ(metricSum(a, "shardscaler_leader"), 1);
  EXPECT_EQ(metricSum(b, "shardscaler_leader"), 0);
  const Json first_lease = lease();
  EXPECT_EQ(first_lease["spec"].value("leaseDurationSeconds", 0), 15);

  // A scale-down 4 -> 2 is carried out once, by a.
  createPrometheus(4);
  applyShardSet({.shards = 4, .when_scaled = "Retain", .retention_period = "1h"});
  ASSERT_TRUE(waitForSettled(4, 0));
  scaleWithKubectl(2);
  ASSERT_TRUE(waitForSettled(2, 2));
  EXPECT_GE(appliedSince(a, 0), 4u) << "pause, two detaches, set shards";
  EXPECT_EQ(appliedSince(b, 0), 0u) << "the standby wrote:\n" << b.logTail();
  auto events = shardSetEvents();
  EXPECT_EQ(std::ranges::count_if(
                events, [](const std::string& e) { return e.starts_with("ShardRetained: "); }),
            2)
      << ::testing::PrintToString(events);
  EXPECT_EQ(metricSum(b, "shardscaler_leader"), 0);
  EXPECT_EQ(holder(), "replica-a");

  // kill -9 a: b takes over once the Lease expires (15 s without renewal), at its next try (every
  // 2 s), with a few seconds' slack for a loaded machine: within 25 s, never before 5 s.
  const auto killed = Clock::now();
  a.kill9();
  ASSERT_TRUE(waitForHolder("replica-b", 30s));
  const double takeover = secondsSince(killed);
  std::cout << "[ election ] kill -9 of the holder -> replica-b holds the Lease after " << takeover
            << " s\n";
  EXPECT_LT(takeover, 25.0);
  EXPECT_GT(takeover, 5.0) << "took over a Lease that had not expired";
  ASSERT_TRUE(
      waitFor("b leading", [&](std::string*) { return metricSum(b, "shardscaler_leader") == 1; }));
  EXPECT_GT(lease()["spec"].value("leaseTransitions", 0),
            first_lease["spec"].value("leaseTransitions", 0));

  // b carries out the next change: 2 -> 3 re-attaches shard 2.
  scaleWithKubectl(3);
  ASSERT_TRUE(waitForSettled(3, 1));
  EXPECT_GE(appliedSince(b, 0), 2u) << "pause, re-attach, set shards";

  // a comes back (as a restarted pod would) and waits as the standby.
  const size_t a_restart = readFile(a.logFile()).size();
  a.start();
  ASSERT_TRUE(waitFor("restarted a ready as the standby", [&](std::string* seen) {
    *seen = a.httpGet(a.probePort(), "/readyz").second;
    return ready(a);
  }));
  ASSERT_TRUE(waitFor("a to see leader replica-b", [&](std::string*) {
    return readFile(a.logFile()).find("new leader leader=replica-b", a_restart) !=
           std::string::npos;
  }));
  EXPECT_EQ(holder(), "replica-b");
  EXPECT_EQ(metricSum(a, "shardscaler_leader"), 0);

  // SIGTERM b: it releases the Lease on the way out and a acquires it at its next retry.
  const auto sigterm = Clock::now();
  auto status = b.terminate(15s);
  const double exited = secondsSince(sigterm);
  const Json released = lease();
  ASSERT_TRUE(status) << "b still running 15 s after SIGTERM";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
      << testenv::describeWaitStatus(*status);
  EXPECT_LT(exited, 10.0);
  const std::string holder_at_exit = released["spec"].value("holderIdentity", "");
  EXPECT_TRUE(holder_at_exit.empty() || holder_at_exit == "replica-a")
      << "b exited still holding the Lease: " << released.dump();
  ASSERT_TRUE(waitForHolder("replica-a", 15s));
  const double handover = secondsSince(sigterm);
  std::cout << "[ election ] SIGTERM of the holder: exited 0 after " << exited
            << " s; holder at exit \"" << holder_at_exit << "\"; replica-a holds the Lease "
            << handover << " s after SIGTERM\n";
  // At its next retry, far from the 15 s lease duration: retries come every 2 s plus a jitter
  // of up to 1.2 x 2 s (client-go's), so up to 4.4 s, plus this test's polling.
  EXPECT_LT(handover, exited + 5.0);
  ASSERT_TRUE(
      waitFor("a leading", [&](std::string*) { return metricSum(a, "shardscaler_leader") == 1; }));

  // a carries out the next change.
  scaleWithKubectl(2);
  ASSERT_TRUE(waitForSettled(2, 2));
  EXPECT_GE(appliedSince(a, a_restart), 3u) << "pause, detach, set shards";
  b_.reset();  // exited already
}

// A standby that is stopped leaves the holder's Lease alone; a holder that finds the Lease taken
// by someone else (here a test writing it) stops at once rather than act beside the new holder,
// and says so.
TEST_F(LeaderElectionTest, AStandbyLeavesTheLeaseAloneAndALeaderThatLosesItStops) {
  ShardscalerProcess& a = *shardscaler_;
  ASSERT_TRUE(waitForHolder("replica-a", 30s));
  startReplicaB();
  ASSERT_TRUE(waitFor("b ready as the standby", [&](std::string*) { return ready(*b_); }));
  const std::string rv = lease()["metadata"].value("resourceVersion", "");

  const auto sigterm = Clock::now();
  auto status = b_->terminate(15s);
  const double took = secondsSince(sigterm);
  std::cout << "[ election ] SIGTERM of the standby: exited after " << took << " s\n";
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
  EXPECT_LT(took, 10.0);
  EXPECT_EQ(holder(), "replica-a") << "the standby released a Lease it did not hold";
  b_.reset();

  // Someone else takes the Lease (a forced write, as after a partition healed).
  Json taken = lease();
  ASSERT_TRUE(taken.is_object());
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[40];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S.000000Z", &tm);  // a MicroTime
  taken["spec"]["holderIdentity"] = "intruder";
  taken["spec"]["acquireTime"] = stamp;
  taken["spec"]["renewTime"] = stamp;
  taken["spec"]["leaseDurationSeconds"] = 15;
  std::optional<k8s::Result<Json>> written;
  ASSERT_TRUE(waitFor("the intruder's write", [&](std::string* seen) {
    Json current = lease();
    current["spec"] = taken["spec"];
    written = adminClient().update(k8s::resources::leases(), ns_, current);
    if (*written) return true;
    *seen = written->error().describe();  // a Conflict with a renewal: write again
    return false;
  }));
  const auto lost = Clock::now();
  ASSERT_TRUE(waitFor(
      "replica-a to exit", [&](std::string*) { return !a.running(); }, 15s));
  std::cout << "[ election ] the holder saw the Lease taken and exited after " << secondsSince(lost)
            << " s\n";
  EXPECT_THAT(a.logTail(),
              ::testing::HasSubstr("leader election lost: stopping lease=" + ns_ + "/shardscaler"));
  EXPECT_EQ(holder(), "intruder") << "the old holder overwrote or released the new holder's Lease";
  auto exit_status = a.terminate(1s);
  ASSERT_TRUE(exit_status);
  EXPECT_TRUE(WIFEXITED(*exit_status) && WEXITSTATUS(*exit_status) == 1)
      << testenv::describeWaitStatus(*exit_status);
  a.start();  // back as a standby until the intruder's Lease expires; the fixture stops it
  EXPECT_TRUE(waitFor("replica-a ready as the standby", [&](std::string*) { return ready(a); }));
}

}  // namespace
}  // namespace shardscaler::e2e
