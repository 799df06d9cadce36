// `shardscaler run` as a service against the real API server: /readyz before and after the
// caches sync (an informer kept unsynced by RBAC, then allowed), an API server that is down
// (retried, unready, the reason in /readyz and the log, ready once it is back), and SIGTERM with
// a reconcile in flight (finished, exit 0 within 10 s).
#include <gmock/gmock.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "shardscaler/e2e/scenario.h"
#include "shardscaler/testenv/child_process.h"
#include "shardscaler/testenv/tcp_relay.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;
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

// Stops a process at the end of a test; expects a clean exit on SIGTERM.
void expectCleanStop(ShardscalerProcess& p) {
  auto status = p.terminate(15s);
  EXPECT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
      << "shardscaler did not exit 0 on SIGTERM; log:\n"
      << p.logTail();
}

// ---- /readyz before and after the caches sync ----

// The RBAC of user-1 in `ns`: everything `shardscaler run --namespace ns` reads, except that
// prometheusagents may only be read one by one until `allow_agent_list`.
std::string userRole(const std::string& ns, bool allow_agent_list) {
  const std::string agent_verbs = allow_agent_list ? "[get, list, watch]" : "[get]";
  return "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: shardscaler, "
         "namespace: " +
         ns +
         "}\nrules:\n"
         "- {apiGroups: [shardscaler.io], resources: [shardsets, shardsets/status], verbs: [get, "
         "list, watch, update, patch]}\n"
         "- {apiGroups: [monitoring.coreos.com], resources: [prometheuses], verbs: [get, list, "
         "watch, patch]}\n"
         "- {apiGroups: [monitoring.coreos.com], resources: [prometheusagents], verbs: " +
         agent_verbs +
         "}\n"
         "- {apiGroups: [apps], resources: [statefulsets], verbs: [get, list, watch, patch, "
         "delete]}\n"
         "- {apiGroups: [\"\"], resources: [events], verbs: [create, patch]}\n"
         "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: "
         "shardscaler, namespace: " +
         ns +
         "}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: shardscaler}\n"
         "subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: user-1}]\n";
}

TEST(ReadinessTest, ReadyzWaitsForEveryInformerAndNamesTheOneNotSynced) {
  const std::string ns = createNamespace("ready");
  apply(userRole(ns, /*allow_agent_list=*/false));
  ShardscalerOptions options;
  options.kubeconfig = cluster().writeKubeconfig("user-1-" + ns, cluster().userToken(1));
  options.namespaces = {ns};
  options.log_file = testLogDir() / "shardscaler.log";
  ShardscalerProcess p(options);

  // /healthz answers 200 whenever it answers; record anything else.
  std::vector<std::string> bad_healthz;
  auto probe = [&](std::string* seen) {
    auto health = p.httpGet(p.probePort(), "/healthz");
    if (health.first != 200 && health.first != 0) {
      bad_healthz.push_back(std::to_string(health.first) + " " + health.second);
    }
    auto ready = p.httpGet(p.probePort(), "/readyz");
    *seen = std::to_string(ready.first) + " " + ready.second;
    return ready;
  };

  const std::string agents = "prometheusagents.monitoring.coreos.com/v1alpha1 in " + ns;
  std::pair<int, std::string> ready;
  std::string seen;
  // Every informer but the forbidden one syncs; /readyz names exactly that one and why.
  const std::string expected = "informers not synced: " + agents +
                               "; last error: list prometheusagents.monitoring.coreos.com/"
                               "v1alpha1: HTTP 403 Forbidden\n";
  ASSERT_TRUE(test_kit::eventually(
      30s, kPoll,
      [&](std::string* s) {
        ready = probe(s);
        return ready.first == 503 && ready.second == expected;
      },
      &seen))
      << "last /readyz: " << seen << "\nlog:\n"
      << p.logTail();
  std::cout << "[ readyz   ] before the grant: 503 " << ready.second;
  EXPECT_TRUE(p.running());
  // The log names the resource and the API server's answer.
  EXPECT_THAT(p.logTail(100000),
              HasSubstr("list failed resource=prometheusagents.monitoring.coreos.com/"
                        "v1alpha1 namespace=" +
                        ns + " error=\"Forbidden (403): "));

  // Grant list and watch: it becomes ready without a restart.
  apply(userRole(ns, /*allow_agent_list=*/true));
  const auto granted = Clock::now();
  ASSERT_TRUE(test_kit::eventually(
      60s, kPoll,
      [&](std::string* s) {
        ready = probe(s);
        return ready.first == 200;
      },
      &seen))
      << "last /readyz: " << seen << "\nlog:\n"
      << p.logTail();
  std::cout << "[ readyz   ] 200 \"" << ready.second << "\" " << secondsSince(granted)
            << " s after the grant\n";
  EXPECT_EQ(ready.second, "ok");
  for (int i = 0; i < 5; ++i) EXPECT_EQ(probe(&seen).first, 200) << seen;
  EXPECT_TRUE(bad_healthz.empty()) << ::testing::PrintToString(bad_healthz);
  EXPECT_EQ(p.httpGet(p.probePort(), "/healthz"), std::make_pair(200, std::string("ok")));
  // The probe and metrics listeners are separate: each answers only its own paths.
  EXPECT_EQ(p.httpGet(p.metricsPort(), "/readyz").first, 404);
  EXPECT_EQ(p.httpGet(p.probePort(), "/metrics").first, 404);
  EXPECT_THAT(p.httpGet(p.metricsPort(), "/metrics").second, HasSubstr("shardscaler_leader"));
  expectCleanStop(p);
}

// ---- an API server that is down ----

TEST(ReadinessTest, ApiServerDownKeepsItRetryingAndUnreadyThenReadyWhenBack) {
  const std::string ns = createNamespace("down");
  testenv::TcpRelay relay(cluster().port());  // down: nothing listens on its port
  ShardscalerOptions options;
  options.kubeconfig = cluster().writeAdminKubeconfigVia("relay", relay.httpsUrl());
  options.namespaces = {ns};
  options.log_file = testLogDir() / "shardscaler.log";
  ShardscalerProcess p(options);

  // Every informer waits; /readyz says that none of their lists was answered, and by whom.
  std::string expected = "informers not synced:";
  for (const char* resource :
       {"shardsets.shardscaler.io/v1alpha1", "prometheuses.monitoring.coreos.com/v1",
        "prometheusagents.monitoring.coreos.com/v1alpha1", "statefulsets.apps/v1"}) {
    expected += std::string(" ") + resource + " in " + ns;
  }
  expected +=
      "; last error: list prometheusagents.monitoring.coreos.com/v1alpha1, list "
      "prometheuses.monitoring.coreos.com/v1, list shardsets.shardscaler.io/v1alpha1, list "
      "statefulsets.apps/v1: no answer from the API server " +
      relay.httpsUrl() + "\n";
  std::pair<int, std::string> ready;
  std::string seen;
  ASSERT_TRUE(test_kit::eventually(
      20s, kPoll,
      [&](std::string* s) {
        ready = p.httpGet(p.probePort(), "/readyz");
        *s = std::to_string(ready.first) + " " + ready.second;
        return ready.first == 503 && ready.second == expected;
      },
      &seen))
      << "last /readyz: " << seen << "\nlog:\n"
      << p.logTail();
  std::cout << "[ down     ] /readyz 503: " << ready.second;
  EXPECT_EQ(p.httpGet(p.probePort(), "/healthz").first, 200);

  // It keeps retrying (several failed lists of one resource) and stays up; each failure names
  // the server and the error.
  const std::string failure =
      "list failed resource=shardsets.shardscaler.io/v1alpha1 namespace=" + ns +
      " error=\"Transport: list shardsets.shardscaler.io/v1alpha1";
  auto countFailures = [&] {
    const std::string log = readFile(p.logFile());
    size_t n = 0;
    for (auto at = log.find(failure); at != std::string::npos; at = log.find(failure, at + 1)) {
      const auto end = log.find('\n', at);
      const std::string line = log.substr(at, end - at);
      EXPECT_THAT(line, HasSubstr("cannot reach the API server " + relay.httpsUrl()));
      EXPECT_THAT(line, HasSubstr("Couldn't connect to server"));
      ++n;
    }
    return n;
  };
  ASSERT_TRUE(test_kit::eventually(20s, kPoll, [&](std::string*) { return countFailures() >= 3; }))
      << p.logTail();
  EXPECT_TRUE(p.running());
  EXPECT_EQ(p.httpGet(p.probePort(), "/readyz").first, 503);

  relay.up();
  const auto back = Clock::now();
  ASSERT_TRUE(test_kit::eventually(
      60s, kPoll,
      [&](std::string* s) {
        ready = p.httpGet(p.probePort(), "/readyz");
        *s = std::to_string(ready.first) + " " + ready.second;
        return ready.first == 200;
      },
      &seen))
      << "last /readyz: " << seen << "\nlog:\n"
      << p.logTail();
  std::cout << "[ down     ] ready " << secondsSince(back) << " s after the server came back\n";
  expectCleanStop(p);
}

// ---- SIGTERM ----

// shardscaler reaches the API server through a relay the test can slow down; the emulator and
// the test talk to it directly.
class SigtermTest : public ShardSetScenario {
 protected:
  std::filesystem::path shardscalerKubeconfig() override {
    relay_ = std::make_unique<testenv::TcpRelay>(cluster().port());
    relay_->up();
    return cluster().writeAdminKubeconfigVia("relay", relay_->httpsUrl());
  }

  std::unique_ptr<testenv::TcpRelay> relay_;
};

TEST_F(SigtermTest, FinishesTheReconcileInFlightAndExits0Within10s) {
  createPrometheus(4);
  applyShardSet({.shards = 4, .when_scaled = "Retain", .retention_period = "1h"});
  ASSERT_TRUE(waitForSettled(4, 0));
  ASSERT_TRUE(waitFor("ready", [&](std::string*) {
    return shardscaler_->httpGet(shardscaler_->probePort(), "/readyz").first == 200;
  }));

  // Every request now takes at least 0.3 s: the scale-down 4 -> 1 (pause, three detaches, set
  // shards and resume, each after live reads) runs for seconds.
  relay_->setDelay(300ms);
  const size_t log_start = readFile(shardscaler_->logFile()).size();
  scaleWithKubectl(1);
  const std::string applied = "applied key=" + ns_ + "/main";
  ASSERT_TRUE(waitFor(
      "the first write of the scale-down",
      [&](std::string*) {
        return readFile(shardscaler_->logFile()).find(applied, log_start) != std::string::npos;
      },
      30s));

  const auto sigterm = Clock::now();
  auto status = shardscaler_->terminate(20s);
  const double took = secondsSince(sigterm);
  std::cout << "[ sigterm  ] exit " << (status ? testenv::describeWaitStatus(*status) : "none")
            << " " << took << " s after SIGTERM, with a reconcile in flight\n";
  ASSERT_TRUE(status) << "still running 20 s after SIGTERM";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
      << testenv::describeWaitStatus(*status);
  EXPECT_LT(took, 10.0);

  // The reconcile was in flight at SIGTERM and was finished: writes were applied after it,
  // the last one resuming the target.
  const std::string log = readFile(shardscaler_->logFile()).substr(log_start);
  const auto shutting_down = log.find("shutting down signal=15");
  ASSERT_NE(shutting_down, std::string::npos) << log;
  EXPECT_NE(log.find(applied, shutting_down), std::string::npos)
      << "no write after SIGTERM: the reconcile was not in flight\n"
      << log;
  EXPECT_THAT(log.substr(shutting_down), HasSubstr("set spec.shards 4 -> 1, resume"));
  EXPECT_THAT(log, Not(HasSubstr("still running"))) << log;
  Json target = prometheus();
  EXPECT_EQ(target["spec"]["shards"], 1);
  EXPECT_FALSE(target["spec"].value("paused", false));
  EXPECT_FALSE(
      target["metadata"].value("annotations", Json::object()).contains("shardscaler.io/paused-by"));
  for (int i : {1, 2, 3}) {
    auto s = statefulSet(i);
    ASSERT_TRUE(s) << "shard " << i;
    EXPECT_TRUE(s->retained && !s->attached) << s->name;
  }
  // Its Events were sent before the exit, not dropped.
  auto events = shardSetEvents();
  EXPECT_EQ(std::ranges::count_if(
                events, [](const std::string& e) { return e.starts_with("ShardRetained: "); }),
            3)
      << ::testing::PrintToString(events);
  EXPECT_EQ(std::ranges::count_if(
                events, [](const std::string& e) { return e.starts_with("TargetScaled: "); }),
            1)
      << ::testing::PrintToString(events);

  // Idle, with nothing in flight, at full speed.
  relay_->setDelay(0ms);
  shardscaler_->start();
  ASSERT_TRUE(waitForSettled(1, 3));
  ASSERT_TRUE(waitFor("ready", [&](std::string*) {
    return shardscaler_->httpGet(shardscaler_->probePort(), "/readyz").first == 200;
  }));
  const auto idle_sigterm = Clock::now();
  auto idle = shardscaler_->terminate(20s);
  const double idle_took = secondsSince(idle_sigterm);
  std::cout << "[ sigterm  ] idle: exit " << (idle ? testenv::describeWaitStatus(*idle) : "none")
            << " " << idle_took << " s after SIGTERM\n";
  ASSERT_TRUE(idle);
  EXPECT_TRUE(WIFEXITED(*idle) && WEXITSTATUS(*idle) == 0);
  EXPECT_LT(idle_took, 10.0);
}

// A replica watching several namespaces (four informers each) and holding the Lease: SIGTERM
// still ends it within 10 s, the Lease released.
TEST(ShutdownTest, WatchingSixNamespacesExits0Within10sAndReleasesTheLease) {
  std::vector<std::string> namespaces;
  namespaces.reserve(6);
  for (int i = 0; i < 6; ++i) namespaces.push_back(createNamespace("many"));
  ShardscalerOptions options;
  options.kubeconfig = cluster().kubeconfigPath();
  options.namespaces = namespaces;
  options.leader_elect = true;
  options.leader_election_namespace = namespaces[0];
  options.identity = "replica-many";
  options.log_file = testLogDir() / "shardscaler.log";
  ShardscalerProcess p(options);
  auto holder = [&] {
    Json lease = getOrNull(k8s::resources::leases(), namespaces[0], "shardscaler");
    return lease.is_object() ? lease["spec"].value("holderIdentity", "") : "<no lease>";
  };
  std::string seen;
  ASSERT_TRUE(test_kit::eventually(
      30s, kPoll,
      [&](std::string* s) {
        *s = p.httpGet(p.probePort(), "/readyz").second + " holder=" + holder();
        return p.httpGet(p.probePort(), "/readyz").first == 200 && holder() == "replica-many";
      },
      &seen))
      << seen << "\n"
      << p.logTail();

  const auto sigterm = Clock::now();
  auto status = p.terminate(30s);
  const double took = secondsSince(sigterm);
  std::cout << "[ sigterm  ] 6 namespaces (24 informers), leader: exit "
            << (status ? testenv::describeWaitStatus(*status) : "none") << " " << took
            << " s after SIGTERM\n";
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
  EXPECT_LT(took, 10.0) << p.logTail();
  EXPECT_EQ(holder(), "") << "the Lease was not released";
}

}  // namespace
}  // namespace shardscaler::e2e
