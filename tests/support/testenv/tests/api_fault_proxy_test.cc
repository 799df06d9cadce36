// Integration tests of the API fault proxy in front of the real control plane: with faults off
// kubectl and shardscaler's RestClient work through it (get, list, watch, create, patch, delete)
// and a watch streams event by event; each injected fault reaches the client as the API server's
// own error would, and a refused write did not happen; a cut watch ends and an informer resumes;
// a client that goes away ends its watch at the API server; stop() ends open watches promptly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "shardscaler/k8s_client/informer.h"
#include "shardscaler/k8s_client/kube_config.h"
#include "shardscaler/k8s_client/rest_client.h"
#include "shardscaler/test_kit/eventually.h"
#include "shardscaler/testenv/api_fault_proxy.h"
#include "shardscaler/testenv/child_process.h"
#include "shardscaler/testenv/control_plane.h"

namespace shardscaler::testenv {
namespace {

// The waits look every 100 ms, as they did before the kit.
constexpr std::chrono::milliseconds kWaitPoll{100};

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using Json = nlohmann::json;

const k8s::Resource kConfigMaps{.group = "", .version = "v1", .resource = "configmaps"};

std::unique_ptr<k8s::RestClient> clientFor(const std::filesystem::path& kubeconfig) {
  auto config = k8s::loadKubeConfig(k8s::ConfigSources{.kubeconfig_flag = kubeconfig.string()});
  if (!config) throw std::runtime_error(config.error().describe());
  return std::make_unique<k8s::RestClient>(*config);
}

Json configMap(const std::string& name, const std::string& value) {
  return Json{{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata", {{"name", name}}},
              {"data", {{"value", value}}}};
}

std::string kubectlBinary() {
  const char* kubectl = std::getenv("SHARDSCALER_KUBECTL");
  return kubectl && *kubectl ? kubectl : "/usr/bin/kubectl";
}

class ApiFaultProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto& plane = sharedControlPlane();
    proxy_ = std::make_unique<ApiFaultProxy>(plane, /*seed=*/7);
    ns_ = "proxy-" + std::to_string(++counter_);
    std::string err;
    ASSERT_EQ(plane.kubectl("create namespace " + ns_, nullptr, &err), 0) << err;
    kubeconfig_ = proxy_->writeKubeconfig("proxied-admin", plane.adminToken(), ns_);
    proxied_ = clientFor(kubeconfig_);
    direct_ = clientFor(plane.kubeconfigPath());
  }

  void TearDown() override {
    if (HasFailure()) std::cerr << "fault log: " << proxy_->faultLogPath() << std::endl;
  }

  int kubectl(const std::string& args, std::string* out) {
    std::vector<std::string> argv{kubectlBinary(), "--kubeconfig", kubeconfig_.string()};
    std::string word;
    for (char c : args + " ") {
      if (c != ' ') {
        word += c;
      } else if (!word.empty()) {
        argv.push_back(word);
        word.clear();
      }
    }
    auto result = runCommand(argv, "", 60s);
    *out = result.out + result.err;
    return result.exit_code;
  }

  std::optional<Json> directGet(const std::string& name) {
    auto result = direct_->get(kConfigMaps, ns_, name);
    return result ? std::optional(*result) : std::nullopt;
  }

  static int counter_;
  std::string ns_;
  std::unique_ptr<ApiFaultProxy> proxy_;
  std::filesystem::path kubeconfig_;
  std::unique_ptr<k8s::RestClient> proxied_;
  std::unique_ptr<k8s::RestClient> direct_;
};

int ApiFaultProxyTest::counter_ = 0;

TEST_F(ApiFaultProxyTest, WithFaultsOffKubectlWorksThroughTheProxy) {
  std::string out;
  ASSERT_EQ(kubectl("create configmap kc --from-literal=a=1", &out), 0) << out;
  ASSERT_EQ(kubectl("get configmap kc -o jsonpath={.data.a}", &out), 0) << out;
  EXPECT_EQ(out, "1");
  ASSERT_EQ(kubectl("patch configmap kc --type merge -p {\"data\":{\"a\":\"2\"}}", &out), 0) << out;
  ASSERT_EQ(kubectl("get configmaps -o name", &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("configmap/kc"));
  ASSERT_EQ(kubectl("delete configmap kc", &out), 0) << out;
  EXPECT_FALSE(directGet("kc"));
  const auto counts = proxy_->counts();
  EXPECT_GE(counts.requests, 5U);
  EXPECT_EQ(counts.forwarded, counts.requests);
  EXPECT_EQ(counts.injected(), 0U);
}

TEST_F(ApiFaultProxyTest, WithFaultsOffTheRestClientsVerbsWorkAndAWatchStreamsEventByEvent) {
  auto created = proxied_->create(kConfigMaps, ns_, configMap("one", "1"));
  ASSERT_TRUE(created) << created.error().describe();
  auto got = proxied_->get(kConfigMaps, ns_, "one");
  ASSERT_TRUE(got) << got.error().describe();
  EXPECT_EQ((*got)["data"]["value"], "1");
  auto patched =
      proxied_->patch(kConfigMaps, ns_, "one", k8s::PatchType::Merge, {{"data", {{"value", "2"}}}});
  ASSERT_TRUE(patched) << patched.error().describe();
  EXPECT_EQ((*directGet("one"))["data"]["value"], "2");
  auto list = proxied_->list(kConfigMaps, ns_);
  ASSERT_TRUE(list) << list.error().describe();
  const std::string list_version = (*list)["metadata"]["resourceVersion"];

  // The watch is told to last 300 s; it can only end sooner if the proxy passes the one event
  // on while the stream is still open (a buffering proxy would hold it until the end).
  std::atomic<bool> watching{false};
  std::atomic<bool> give_up{false};
  std::string seen;
  std::thread writer([&] {
    test_kit::eventually(30s, kWaitPoll, [&] { return watching.load(); });
    std::this_thread::sleep_for(200ms);  // the watch request is on its way
    EXPECT_TRUE(direct_->create(kConfigMaps, ns_, configMap("two", "2")));
    // Bounds the test if the event never comes through.
    test_kit::eventually(20s, kWaitPoll, [&] { return !watching.load(); });
    give_up = true;
  });
  watching = true;
  const auto watched = proxied_->watch(
      kConfigMaps, ns_, k8s::WatchOptions{.resource_version = list_version, .timeout_seconds = 300},
      [&](k8s::WatchEvent&& event) {
        if (event.type != k8s::WatchEventType::Added) return true;
        seen = event.object["metadata"]["name"];
        return false;
      },
      &give_up);
  watching = false;
  writer.join();
  ASSERT_TRUE(watched) << watched.error().describe();
  EXPECT_EQ(seen, "two");

  auto removed = proxied_->remove(kConfigMaps, ns_, "one");
  ASSERT_TRUE(removed) << removed.error().describe();
  EXPECT_FALSE(directGet("one"));
  EXPECT_EQ(proxy_->counts().injected(), 0U);
}

TEST_F(ApiFaultProxyTest, EachRefusalIsTheApiServersErrorAndTheWriteDidNotHappen) {
  ASSERT_TRUE(direct_->create(kConfigMaps, ns_, configMap("target", "original")));

  proxy_->setFaults({.server_error = 1.0, .verbs = {"create"}});
  auto created = proxied_->create(kConfigMaps, ns_, configMap("never", "x"));
  ASSERT_FALSE(created);
  EXPECT_EQ(created.error().kind, k8s::ErrorKind::ServerError);
  EXPECT_EQ(created.error().http_status, 500);
  EXPECT_FALSE(directGet("never"));

  proxy_->setFaults({.conflict = 1.0, .verbs = {"patch"}});
  auto patched = proxied_->patch(kConfigMaps, ns_, "target", k8s::PatchType::Merge,
                                 {{"data", {{"value", "changed"}}}});
  ASSERT_FALSE(patched);
  EXPECT_EQ(patched.error().kind, k8s::ErrorKind::Conflict);
  EXPECT_EQ(patched.error().reason, "Conflict");
  EXPECT_EQ((*directGet("target"))["data"]["value"], "original");
  // Reads are not writes: the conflict never hits them.
  EXPECT_TRUE(proxied_->get(kConfigMaps, ns_, "target"));

  proxy_->setFaults({.too_many_requests = 1.0, .verbs = {"delete"}});
  auto removed = proxied_->remove(kConfigMaps, ns_, "target");
  ASSERT_FALSE(removed);
  EXPECT_EQ(removed.error().kind, k8s::ErrorKind::TooManyRequests);
  EXPECT_EQ(removed.error().retry_after, std::chrono::seconds(1));
  EXPECT_TRUE(directGet("target"));

  // A path filter: secrets pass while configmaps fail.
  proxy_->setFaults({.server_error = 1.0, .path_regex = "/configmaps(/|$)"});
  EXPECT_FALSE(proxied_->get(kConfigMaps, ns_, "target"));
  auto secrets = proxied_->list(k8s::resources::secrets(), ns_);
  EXPECT_TRUE(secrets) << secrets.error().describe();

  proxy_->disableFaults();
  auto again = proxied_->remove(kConfigMaps, ns_, "target");
  EXPECT_TRUE(again) << again.error().describe();

  const auto counts = proxy_->counts();
  EXPECT_EQ(counts.server_error, 2U);
  EXPECT_EQ(counts.conflict, 1U);
  EXPECT_EQ(counts.too_many_requests, 1U);
  EXPECT_EQ(counts.injected(), 4U);
  std::ifstream log(proxy_->faultLogPath());
  std::vector<Json> lines;
  for (std::string line; std::getline(log, line);) lines.push_back(Json::parse(line));
  ASSERT_EQ(lines.size(), 4U);
  EXPECT_EQ(lines[0]["fault"], "server_error");
  EXPECT_EQ(lines[0]["verb"], "create");
  EXPECT_EQ(lines[1]["fault"], "conflict");
  EXPECT_EQ(lines[1]["method"], "PATCH");
  EXPECT_EQ(lines[1]["path"], "/api/v1/namespaces/" + ns_ + "/configmaps/target");
  EXPECT_EQ(lines[2]["fault"], "too_many_requests");
}

TEST_F(ApiFaultProxyTest, LatencyHoldsRequestsAndIsCounted) {
  proxy_->setFaults({.latency = 1.0, .latency_min = 50ms, .latency_max = 150ms, .verbs = {"get"}});
  ASSERT_TRUE(direct_->create(kConfigMaps, ns_, configMap("slow", "1")));
  for (int i = 0; i < 3; ++i) {
    auto got = proxied_->get(kConfigMaps, ns_, "slow");
    EXPECT_TRUE(got) << got.error().describe();
  }
  EXPECT_EQ(proxy_->counts().latency, 3U);
  EXPECT_EQ(proxy_->counts().forwarded, 3U);
}

TEST_F(ApiFaultProxyTest, ACutWatchEndsAndAnInformerResumesWithNothingMissed) {
  proxy_->setFaults(
      {.cut_watch = 1.0, .cut_after_min = 200ms, .cut_after_max = 400ms, .verbs = {"watch"}});
  k8s::RealClock clock;
  k8s::InformerOptions options;
  options.ns = ns_;
  options.backoff.initial = 50ms;
  options.backoff.max = 200ms;
  k8s::Informer informer(*proxied_, kConfigMaps, options, clock);
  informer.start();
  ASSERT_TRUE(informer.waitForSync(30s));
  constexpr int kObjects = 8;
  for (int i = 0; i < kObjects; ++i) {
    ASSERT_TRUE(direct_->create(kConfigMaps, ns_, configMap("cm-" + std::to_string(i), "v")));
    std::this_thread::sleep_for(150ms);  // spread over several cut watches
  }
  EXPECT_TRUE(test_kit::eventually(30s, kWaitPoll, [&] {
    int present = 0;
    for (int i = 0; i < kObjects; ++i) {
      present += informer.store().get(ns_, "cm-" + std::to_string(i)) ? 1 : 0;
    }
    return present == kObjects;
  }));
  EXPECT_TRUE(
      test_kit::eventually(30s, kWaitPoll, [&] { return proxy_->counts().cut_watch >= 2; }));
  const auto stats = informer.stats();
  informer.stop();
  EXPECT_GE(stats.watches, 2U);
  EXPECT_GE(stats.watch_errors, 1U);
}

// apiserver_registered_watchers for ConfigMaps, from the API server's own /metrics.
int configMapWatchers(k8s::RestClient& client) {
  auto metrics = client.getPath("/metrics");
  if (!metrics || !metrics->is_string()) return -1;
  const std::string text = metrics->get<std::string>();
  const std::string series =
      "apiserver_registered_watchers{group=\"\",kind=\"ConfigMap\",version=\"v1\"} ";
  const auto at = text.find(series);
  if (at == std::string::npos) return 0;
  return std::stoi(text.substr(at + series.size()));
}

TEST_F(ApiFaultProxyTest, AClientThatGoesAwayEndsItsWatchAtTheApiServer) {
  const int before = configMapWatchers(*direct_);
  ASSERT_GE(before, 0);
  std::atomic<bool> stop{false};
  k8s::Result<void> watched;
  std::thread watcher([&] {
    watched = proxied_->watch(
        kConfigMaps, ns_, k8s::WatchOptions{.timeout_seconds = 300},
        [](k8s::WatchEvent&&) { return true; }, &stop);
  });
  EXPECT_TRUE(test_kit::eventually(30s, kWaitPoll,
                                   [&] { return configMapWatchers(*direct_) == before + 1; }))
      << configMapWatchers(*direct_) << " watchers, " << before << " before";
  stop = true;  // the client closes its connection
  watcher.join();
  // Without the proxy noticing, the API server would keep the watch for its 300 s.
  EXPECT_TRUE(
      test_kit::eventually(30s, kWaitPoll, [&] { return configMapWatchers(*direct_) == before; }))
      << configMapWatchers(*direct_) << " watchers, " << before << " before";
}

TEST_F(ApiFaultProxyTest, StopEndsAnOpenWatchAndReturnsPromptly) {
  std::atomic<bool> started{false};
  k8s::Result<void> watched;
  std::thread watcher([&] {
    started = true;
    watched = proxied_->watch(kConfigMaps, ns_, k8s::WatchOptions{.timeout_seconds = 300},
                              [](k8s::WatchEvent&&) { return true; });
  });
  ASSERT_TRUE(test_kit::eventually(
      30s, kWaitPoll, [&] { return started.load() && proxy_->counts().forwarded >= 1; }));
  std::this_thread::sleep_for(300ms);  // the stream is open
  const auto begin = std::chrono::steady_clock::now();
  proxy_->stop();
  const auto took = std::chrono::steady_clock::now() - begin;
  watcher.join();
  EXPECT_FALSE(watched);  // cut at the client, as when a proxy dies
  EXPECT_LT(took, 3s) << "stop() must not wait for open streams";
  proxy_->stop();  // idempotent
}

}  // namespace
}  // namespace shardscaler::testenv
