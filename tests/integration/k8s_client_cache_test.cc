// The cache half of k8s-client against a real kube-apiserver (1.20) on loopback: an informer
// sees add/modify/delete in order, resumes after a forced disconnect with nothing missed or
// repeated, and two leader electors hand a real Lease over (on release, and on expiry).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "shardscaler/k8s_client/informer.h"
#include "shardscaler/k8s_client/kube_config.h"
#include "shardscaler/k8s_client/leader_elector.h"
#include "shardscaler/k8s_client/rest_client.h"
#include "shardscaler/test_kit/eventually.h"
#include "shardscaler/testenv/control_plane.h"
#include "shardscaler/testenv/tcp_relay.h"

namespace shardscaler::k8s {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const Resource kConfigMaps{"", "v1", "configmaps", true};
const char* const kSelector = "shardscaler-test=cache";

KubeConfig adminConfig() {
  auto config = loadKubeconfigFiles({testenv::sharedControlPlane().kubeconfigPath()});
  if (!config) throw std::runtime_error(config.error().describe());
  return *config;
}

// Handler calls as "add name", "update name rv", "delete name", in order.
class HandlerLog {
 public:
  EventHandlers handlers() {
    return EventHandlers{
        .on_add = [this](const ObjectPtr& o) { push("add " + name(o)); },
        .on_update =
            [this](const ObjectPtr&, const ObjectPtr& o) {
              push("update " + name(o) + " " + resourceVersionOf(*o));
            },
        .on_delete = [this](const ObjectPtr& o) { push("delete " + name(o)); },
    };
  }
  std::vector<std::string> entries() const {
    std::lock_guard lock(mutex_);
    return entries_;
  }
  std::size_t count(const std::string& entry) const {
    auto all = entries();
    return static_cast<std::size_t>(std::count(all.begin(), all.end(), entry));
  }

 private:
  static std::string name(const ObjectPtr& o) { return (*o)["metadata"]["name"]; }
  void push(std::string entry) {
    std::lock_guard lock(mutex_);
    entries_.push_back(std::move(entry));
  }
  mutable std::mutex mutex_;
  std::vector<std::string> entries_;
};

class K8sClientCache : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { admin_ = new RestClient(adminConfig()); }
  static void TearDownTestSuite() {
    delete admin_;
    admin_ = nullptr;
  }
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = "cache-" + std::string(info->name());
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    ns_ = name.substr(0, 60);
    auto created = admin_->create(
        resources::namespaces(), "",
        {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns_}}}});
    ASSERT_TRUE(created.has_value()) << created.error().describe();
  }
  Json configMap(const std::string& name) {
    return {{"apiVersion", "v1"},
            {"kind", "ConfigMap"},
            {"metadata", {{"name", name}, {"labels", {{"shardscaler-test", "cache"}}}}},
            {"data", {{"v", "0"}}}};
  }
  void create(const std::string& name) {
    auto r = admin_->create(kConfigMaps, ns_, configMap(name));
    ASSERT_TRUE(r.has_value()) << r.error().describe();
  }
  std::string patch(const std::string& name, const std::string& value) {
    auto r = admin_->patch(kConfigMaps, ns_, name, PatchType::Merge, {{"data", {{"v", value}}}});
    EXPECT_TRUE(r.has_value()) << r.error().describe();
    return r ? resourceVersionOf(*r) : std::string();
  }
  LeaderElectionConfig electionConfig(const std::string& identity) {
    LeaderElectionConfig config;
    config.lease_namespace = ns_;
    config.lease_name = "shardscaler";
    config.identity = identity;
    return config;
  }
  Json lease() {
    auto got = admin_->get(resources::leases(), ns_, "shardscaler");
    EXPECT_TRUE(got.has_value()) << got.error().describe();
    return got ? *got : Json::object();
  }

  static RestClient* admin_;
  std::string ns_;
  RealClock clock_;
};

RestClient* K8sClientCache::admin_ = nullptr;

TEST_F(K8sClientCache, InformerSeesAddModifyDeleteInOrder) {
  InformerOptions options;
  options.ns = ns_;
  options.label_selector = kSelector;
  options.transform = dropManagedFields;
  Informer informer(*admin_, kConfigMaps, options, clock_);
  HandlerLog log;
  informer.addEventHandlers(log.handlers());
  informer.start();
  ASSERT_TRUE(informer.waitForSync(seconds(30)));

  create("watched");
  auto modified_rv = patch("watched", "1");
  ASSERT_TRUE(admin_->remove(kConfigMaps, ns_, "watched").has_value());
  ASSERT_TRUE(test_kit::eventually(seconds(30), [&] { return log.entries().size() >= 3; }));
  EXPECT_EQ(log.entries(), (std::vector<std::string>{"add watched", "update watched " + modified_rv,
                                                     "delete watched"}));
  EXPECT_EQ(informer.store().size(), 0u);

  auto stopping = std::chrono::steady_clock::now();
  informer.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - stopping, seconds(2));
}

TEST_F(K8sClientCache, ResumesAfterAForcedDisconnectWithNothingMissedOrRepeated) {
  auto config = adminConfig();
  // Stands for the network between client and server, which the test fails below.
  testenv::TcpRelay proxy(testenv::sharedControlPlane().port());
  proxy.up();
  config.server = proxy.httpsUrl();
  RestClient proxied(config);

  InformerOptions options;
  options.ns = ns_;
  options.label_selector = kSelector;
  Informer informer(proxied, kConfigMaps, options, clock_);
  HandlerLog log;
  informer.addEventHandlers(log.handlers());
  informer.start();
  ASSERT_TRUE(informer.waitForSync(seconds(30)));
  create("before");
  ASSERT_TRUE(test_kit::eventually(seconds(30), [&] { return log.count("add before") == 1; }));

  // The network fails: every connection is cut and new ones are refused for a while.
  proxy.setRefusing(true);
  proxy.cutAll();
  ASSERT_TRUE(
      test_kit::eventually(seconds(30), [&] { return informer.stats().watch_errors >= 1; }));
  std::vector<std::string> expected = {"add before"};
  for (int i = 0; i < 5; ++i) {
    create("during-" + std::to_string(i));
    expected.emplace_back("add during-" + std::to_string(i));
  }
  expected.push_back("update before " + patch("before", "1"));
  ASSERT_TRUE(admin_->remove(kConfigMaps, ns_, "during-0").has_value());
  expected.emplace_back("delete during-0");
  proxy.setRefusing(false);

  ASSERT_TRUE(test_kit::eventually(seconds(60), [&] {
    return log.entries().size() >= expected.size();
  })) << "watch did not resume";
  create("after");
  expected.emplace_back("add after");
  ASSERT_TRUE(test_kit::eventually(seconds(30), [&] { return log.count("add after") == 1; }));
  EXPECT_EQ(log.entries(), expected);
  auto stats = informer.stats();
  EXPECT_EQ(stats.lists, 1u) << "a disconnect must resume the watch, not relist";
  EXPECT_GE(stats.watches, 2u);
  EXPECT_EQ(informer.store().size(), 6u);  // before, during-1..4, after
  informer.stop();
}

TEST_F(K8sClientCache, ReleaseOnStopHandsTheLeaseToTheOtherCandidateAtOnce) {
  RestClient client_a(adminConfig());
  RestClient client_b(adminConfig());
  std::atomic<int> b_started{0};
  auto config_a = electionConfig("candidate-a");
  auto config_b = electionConfig("candidate-b");
  config_b.callbacks.on_started_leading = [&] { ++b_started; };
  LeaderElector a(client_a, config_a, clock_);
  LeaderElector b(client_b, config_b, clock_);
  a.start();
  ASSERT_TRUE(test_kit::eventually(seconds(30), [&] { return a.isLeader(); }));
  b.start();
  ASSERT_TRUE(
      test_kit::eventually(seconds(30), [&] { return b.currentLeader() == "candidate-a"; }));
  EXPECT_FALSE(b.isLeader());
  EXPECT_EQ(lease()["spec"]["holderIdentity"], "candidate-a");

  auto released_at = std::chrono::steady_clock::now();
  a.stop();
  EXPECT_FALSE(a.isLeader());
  ASSERT_TRUE(test_kit::eventually(seconds(15), [&] { return b.isLeader(); }));
  auto handover = std::chrono::steady_clock::now() - released_at;
  // Within B's next retry (2 s x up to 2.2), far sooner than the 15 s lease would take.
  EXPECT_LT(handover, milliseconds(6000));
  auto held = lease();
  EXPECT_EQ(held["spec"]["holderIdentity"], "candidate-b");
  EXPECT_EQ(held["spec"]["leaseTransitions"], 1);
  EXPECT_EQ(b_started.load(), 1);

  b.stop();
  auto released = lease();
  EXPECT_EQ(released["spec"]["holderIdentity"], "");
  EXPECT_EQ(released["spec"]["leaseDurationSeconds"], 1);
}

TEST_F(K8sClientCache, ALeaderThatVanishesIsReplacedOnlyAfterItsLeaseExpires) {
  RestClient client_a(adminConfig());
  RestClient client_b(adminConfig());
  auto fast = [&](const std::string& identity, bool release) {
    auto config = electionConfig(identity);
    config.lease_duration = seconds(4);
    config.renew_deadline = seconds(3);
    config.retry_period = milliseconds(500);
    config.release_on_cancel = release;
    return config;
  };
  LeaderElector a(client_a, fast("candidate-a", /*release=*/false), clock_);
  LeaderElector b(client_b, fast("candidate-b", true), clock_);
  a.start();
  ASSERT_TRUE(test_kit::eventually(seconds(30), [&] { return a.isLeader(); }));
  b.start();
  ASSERT_TRUE(
      test_kit::eventually(seconds(30), [&] { return b.currentLeader() == "candidate-a"; }));

  auto vanished_at = std::chrono::steady_clock::now();
  a.stop();  // no release: as if the process had been killed
  EXPECT_EQ(lease()["spec"]["holderIdentity"], "candidate-a");
  ASSERT_TRUE(test_kit::eventually(seconds(30), [&] { return b.isLeader(); }));
  auto waited = std::chrono::steady_clock::now() - vanished_at;
  EXPECT_GE(waited, milliseconds(3500)) << "took over a lease that had not expired";
  EXPECT_EQ(lease()["spec"]["holderIdentity"], "candidate-b");
  EXPECT_EQ(lease()["spec"]["leaseTransitions"], 1);
  b.stop();
}

}  // namespace
}  // namespace shardscaler::k8s
