// Issue 24, item 8: the real `shardscaler` binary's HTTPS server (the shard guard and the external
// metrics API on one port, client certificates asked for) against hostile input, with the real
// API server calling the guard. For each input the answer, and that the process's memory stays
// flat (VmRSS of /proc/<pid>/status); under a chunk-extension flood and 80 parallel 4 MB uploads
// its peak (VmHWM) stays under 64 MiB. Then the update-then-delete sequences of item 5, through
// kubectl as a user the guard does not exempt.
//
// The control plane runs with the aggregation layer, so that the front proxy's ConfigMap names a
// request-header CA, and the test presents the front proxy's client certificate itself.
#include <gmock/gmock.h>

#include <openssl/ssl.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "shardscaler/e2e/guard_webhook.h"
#include "shardscaler/e2e/hand_built_shards.h"
#include "shardscaler/e2e/scenario.h"
#include "shardscaler/e2e/shardscaler_metrics.h"
#include "shardscaler/guard/shard_guard.h"
#include "shardscaler/k8s_client/base64.h"
#include "shardscaler/k8s_meta/time.h"
#include "shardscaler/test_kit/http_client.h"
#include "shardscaler/test_kit/raw_tls_client.h"
#include "shardscaler/testenv/loopback_ports.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;
using test_kit::ClientReply;
using test_kit::ClientRequest;
using test_kit::RawTlsClient;
using ::testing::AnyOf;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr long kMiB = 1024;  // in KiB, as /proc reports
// The acceptance bound on the process's peak memory under the floods.
constexpr long kPeakBoundKiB = 64 * kMiB;
// How far the resident set may stay above its level before an input, once the input is over.
constexpr long kFlatSlackKiB = 12 * kMiB;
constexpr const char* kGuardedLabel = "e2e.shardscaler.io/guarded-by";

class AggregationLayer : public ::testing::Environment {
 public:
  void SetUp() override { testenv::setSharedControlPlaneOptions({.aggregation_layer = true}); }
};
[[maybe_unused]] auto* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new AggregationLayer);

struct Memory {
  long rss_kib = 0;
  long peak_kib = 0;  // VmHWM: the most the process was resident since it started
};

Memory memoryOf(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  Memory memory;
  std::string line;
  while (std::getline(status, line)) {
    std::istringstream fields(line);
    std::string key;
    long value = 0;
    fields >> key >> value;
    if (key == "VmRSS:") memory.rss_kib = value;
    if (key == "VmHWM:") memory.peak_kib = value;
  }
  return memory;
}

std::string mib(long kib) {
  std::ostringstream out;
  out.precision(1);
  out << std::fixed << static_cast<double>(kib) / 1024.0 << " MiB";
  return out.str();
}

// Samples VmRSS every 10 ms while it lives: the highest seen.
class RssSampler {
 public:
  explicit RssSampler(pid_t pid)
      : thread_([this, pid] {
          while (!stop_) {
            peak_ = std::max(peak_.load(), memoryOf(pid).rss_kib);
            std::this_thread::sleep_for(10ms);
          }
        }) {}
  ~RssSampler() { stopNow(); }
  long stopNow() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return peak_;
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<long> peak_{0};
  std::thread thread_;
};

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream all;
  all << in.rdbuf();
  return all.str();
}

std::string userRoles(const std::string& ns) {
  return "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: hostile-user, "
         "namespace: " +
         ns +
         "}\nrules:\n- {apiGroups: [apps], resources: [statefulsets], verbs: [get, list, "
         "delete, patch, update]}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: "
         "RoleBinding\nmetadata: {name: hostile-user, namespace: " +
         ns +
         "}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: hostile-user}\n"
         "subjects: [{kind: User, name: user-1, apiGroup: rbac.authorization.k8s.io}]\n";
}

// A DELETE review of a StatefulSet as kube-apiserver 1.20 sends it, for the malformed variants.
Json deleteReview(const std::string& ns) {
  Json review = Json::parse(R"({
    "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
    "request": {
      "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
      "kind": {"group": "apps", "version": "v1", "kind": "StatefulSet"},
      "resource": {"group": "apps", "version": "v1", "resource": "statefulsets"},
      "name": "prometheus-main-shard-1", "operation": "DELETE",
      "userInfo": {"username": "user-1", "groups": ["system:authenticated"]},
      "oldObject": {"metadata": {"name": "prometheus-main-shard-1",
                                 "labels": {"shardscaler.io/shardset": "main",
                                            "operator.prometheus.io/shard": "1"}}}
    }})");
  review["request"]["namespace"] = ns;
  return review;
}

std::string hex(std::size_t n) {
  std::ostringstream out;
  out << std::hex << n;
  return out.str();
}

// Everything the tests share: one namespace guarded by a webhook configuration of its own, one
// shardscaler serving it and the external metrics API, and the objects the guard judges there.
struct World {
  std::string ns;
  std::string idle_ns;  // the controller watches this one: ns is the guard's alone
  GuardWebhook webhook;
  std::unique_ptr<ShardscalerProcess> shardscaler;
  std::filesystem::path user_kubeconfig;
  std::string ca_pem;  // shardscaler's serving CA, from its Secret
  std::string front_proxy_cert;
  std::string front_proxy_key;

  World() {
    ns = createNamespace("hostile");
    idle_ns = createNamespace("hostile-idle");
    apply(userRoles(ns));
    user_kubeconfig = cluster().writeKubeconfig("user-1-" + ns, cluster().userToken(1));
    webhook = {.configuration = "shardscaler-guard-" + ns,
               .port = testenv::pickFreePort(),
               .label_key = kGuardedLabel,
               .label_value = ns};
    installGuardWebhook(webhook);
    guardNamespace(webhook, ns);
    const auto pki = cluster().workDir() / "pki";
    front_proxy_cert = readFile(pki / "front-proxy-client.crt");
    front_proxy_key = readFile(pki / "front-proxy-client.key");
    if (front_proxy_cert.empty()) throw std::runtime_error("no front proxy certificate");
    buildTargetByHand(ns, 2);
    createActiveShard(ns, 0);
    createActiveShard(ns, 1);
    createRetainedShard(ns, 3,
                        k8s::formatTime(std::chrono::system_clock::now() + std::chrono::hours(1)));
    startShardscaler();
    const Json secret = getOrNull(k8s::resources::secrets(), ns, "shardscaler-webhook-cert");
    auto ca = k8s::base64Decode(secret["data"].value("ca.crt", ""));
    if (!ca) throw std::runtime_error("no ca.crt in the webhook's Secret");
    ca_pem = *ca;
  }

  ~World() {
    try {
      removeGuardWebhook(webhook.configuration);
    } catch (...) {
    }
  }

  void startShardscaler() {
    std::vector<std::string> args = guardServingArgs(webhook, ns);
    args.emplace_back("--external-metrics-api=true");
    args.emplace_back("--external-metrics-service=" + ns + "/shardscaler-metrics-api");
    if (shardscaler) {
      shardscaler->terminate(15s);
      shardscaler->start();
    } else {
      shardscaler = std::make_unique<ShardscalerProcess>(
          ShardscalerOptions{.kubeconfig = cluster().kubeconfigPath(),
                             .namespaces = {idle_ns},
                             .extra_args = std::move(args),
                             .log_file = testLogDir() / "shardscaler.log"});
    }
    std::pair<int, std::string> ready;
    if (!test_kit::eventually(60s, kPoll, [&] {
          ready = shardscaler->httpGet(shardscaler->probePort(), "/readyz");
          return ready.first == 200;
        })) {
      throw std::runtime_error("shardscaler not ready: " + std::to_string(ready.first) + " " +
                               ready.second + "\n" + shardscaler->logTail());
    }
  }

  std::string url(const std::string& target) const {
    return "https://127.0.0.1:" + std::to_string(webhook.port) + target;
  }
  ClientRequest request(const std::string& target) const {
    ClientRequest r;
    r.url = url(target);
    r.ca_pem = ca_pem;
    return r;
  }
  ClientRequest asFrontProxy(const std::string& target) const {
    ClientRequest r = request(target);
    r.client_certificate_pem = front_proxy_cert;
    r.client_key_pem = front_proxy_key;
    r.headers = {"X-Remote-User: admin", "X-Remote-Group: system:masters"};
    return r;
  }
  std::string metricPath(const std::string& query) const {
    return "/apis/external.metrics.k8s.io/v1beta1/namespaces/" + ns +
           "/shardscaler_samples_per_second?" + query;
  }
  std::unique_ptr<RawTlsClient> raw(RawTlsClient::Options options = {}) const {
    options.ca_pem = ca_pem;
    auto client = std::make_unique<RawTlsClient>(webhook.port, std::move(options));
    if (!client->connect() || !client->handshake()) return nullptr;
    return client;
  }
  // The status shardscaler answers `bytes` with, on a connection of their own (0: no answer).
  int statusFor(const std::string& bytes) const {
    auto client = raw();
    if (!client || !client->send(bytes)) return -1;
    return client->readResponse().status;
  }
  Memory memory() const { return memoryOf(shardscaler->pid()); }
  KubectlResult asUser(const std::string& args) const {
    return kubectl("--kubeconfig=" + user_kubeconfig.string() + " " + args);
  }
};

class HostileInputTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    try {
      world_ = std::make_unique<World>();
    } catch (const std::exception& e) {
      setup_error_ = e.what();
    }
  }
  static void TearDownTestSuite() { world_.reset(); }

  void SetUp() override {
    ASSERT_TRUE(world_) << "set-up failed: " << setup_error_;
    ASSERT_TRUE(world_->shardscaler->running()) << world_->shardscaler->logTail();
    // Until the front proxy's settings are read and the API server calls the guard.
    ASSERT_TRUE(test_kit::eventually(60s, kPoll, [&] {
      return test_kit::requestOnce(w().asFrontProxy(w().metricPath("labelSelector=shardset%3Dx")))
                 .status != 503;
    })) << w().shardscaler->logTail();
    ASSERT_TRUE(waitUntilGuardCalled(*w().shardscaler, w().ns));
    before_ = w().memory();
  }

  void TearDown() override {
    if (HasFailure() && world_) {
      std::cerr << "---- shardscaler log (tail) ----\n" << w().shardscaler->logTail() << "\n";
    }
  }

  static World& w() { return *world_; }

  // Once the input is over, the resident set comes back to within the slack of where it was.
  void expectFlat(const std::string& input) {
    Memory now;
    const bool flat = test_kit::eventually(5s, 100ms, [&] {
      now = w().memory();
      return now.rss_kib <= before_.rss_kib + kFlatSlackKiB;
    });
    std::cout << "[ memory   ] " << input << ": RSS " << mib(before_.rss_kib) << " before, "
              << mib(now.rss_kib) << " after, peak so far " << mib(now.peak_kib) << "\n";
    EXPECT_TRUE(flat) << input << ": RSS " << mib(now.rss_kib) << " after, " << mib(before_.rss_kib)
                      << " before";
    EXPECT_TRUE(w().shardscaler->running());
  }

  static inline std::unique_ptr<World> world_;
  static inline std::string setup_error_;
  Memory before_;
};

// ---- the external metrics API ----

TEST_F(HostileInputTest, ASpoofedRemoteUserWithoutAClientCertificateIs401) {
  ClientRequest spoofed = w().request(w().metricPath("labelSelector=shardset%3Dmain"));
  spoofed.headers = {"X-Remote-User: admin", "X-Remote-Group: system:masters"};
  const ClientReply reply = test_kit::requestOnce(spoofed);
  ASSERT_EQ(reply.code, CURLE_OK) << reply.error;
  EXPECT_EQ(reply.status, 401) << reply.body;
  // The same with the front proxy's certificate reaches the metric (no rates yet: 503, not 401).
  EXPECT_NE(test_kit::requestOnce(w().asFrontProxy(w().metricPath("labelSelector=shardset%3Dmain")))
                .status,
            401);
  expectFlat("spoofed X-Remote-User");
}

TEST_F(HostileInputTest, ALabelSelectorThatIsNotUtf8Is400) {
  for (const char* query : {"labelSelector=%FF", "labelSelector=shardset%3D%FF%FE"}) {
    const ClientReply reply = test_kit::requestOnce(w().asFrontProxy(w().metricPath(query)));
    ASSERT_EQ(reply.code, CURLE_OK) << reply.error;
    EXPECT_EQ(reply.status, 400) << query << ": " << reply.body;
    const Json status = Json::parse(reply.body, nullptr, false);
    ASSERT_FALSE(status.is_discarded()) << reply.body;
    EXPECT_EQ(status.value("reason", ""), "BadRequest");
  }
  expectFlat("%FF in a labelSelector");
}

// ---- the guard's endpoint ----

TEST_F(HostileInputTest, MalformedAdmissionReviewsAre400AndAreNotEchoed) {
  const std::string path(guard::kGuardPath);
  std::vector<std::pair<std::string, Json>> cases;
  auto with = [&](const std::string& what, const std::function<void(Json&)>& change) {
    Json review = deleteReview(w().ns);
    change(review);
    cases.emplace_back(what, std::move(review));
  };
  with("non-string oldObject.metadata.name",
       [](Json& r) { r["request"]["oldObject"]["metadata"]["name"] = 42; });
  with("oldObject.metadata an array",
       [](Json& r) { r["request"]["oldObject"]["metadata"] = Json::array(); });
  with("a label value that is a number", [](Json& r) {
    r["request"]["oldObject"]["metadata"]["labels"]["operator.prometheus.io/shard"] = 1;
  });
  with("a ShardSet label pointing elsewhere", [](Json& r) {
    r["request"]["oldObject"]["metadata"]["labels"]["shardscaler.io/shardset"] = "../../x";
  });
  with("a name that is a path", [](Json& r) { r["request"]["name"] = "../secrets/x"; });
  with("an operation of 100 KB",
       [](Json& r) { r["request"]["operation"] = "\x1b[2J" + std::string(100000, 'A'); });
  const double bad_before =
      metricSum(*w().shardscaler, "shardscaler_guard_reviews_total", R"(result="bad_request")")
          .value_or(0);
  for (const auto& [what, review] : cases) {
    ClientRequest post = w().request(path);
    post.method = "POST";
    post.headers = {"Content-Type: application/json"};
    post.body = review.dump();
    const ClientReply reply = test_kit::requestOnce(post);
    ASSERT_EQ(reply.code, CURLE_OK) << what << ": " << reply.error;
    EXPECT_EQ(reply.status, 400) << what << ": " << reply.body;
    EXPECT_LT(reply.body.size(), 300u) << what;
    EXPECT_THAT(reply.body, Not(HasSubstr("\x1b"))) << what;
  }
  ClientRequest garbage = w().request(path);
  garbage.method = "POST";
  garbage.body = "{\"apiVersion\":";
  EXPECT_EQ(test_kit::requestOnce(garbage).status, 400);

  // Repeated, they are counted every one and logged a few times: no log flood.
  const std::size_t log_before = readFile(w().shardscaler->logFile()).size();
  test_kit::HttpClient client;
  for (int i = 0; i < 200; ++i) {
    ClientRequest post = w().request(path);
    post.method = "POST";
    post.body = cases.front().second.dump();
    ASSERT_EQ(client.perform(post).status, 400) << i;
  }
  const std::string log = readFile(w().shardscaler->logFile()).substr(log_before);
  std::size_t lines = 0;
  for (auto at = log.find("bad admission review"); at != std::string::npos;
       at = log.find("bad admission review", at + 1)) {
    ++lines;
  }
  std::cout << "[ log      ] 200 forged reviews: " << lines << " log lines\n";
  EXPECT_LE(lines, 10u);
  EXPECT_GE(
      metricSum(*w().shardscaler, "shardscaler_guard_reviews_total", R"(result="bad_request")")
          .value_or(0),
      bad_before + cases.size() + 201);
  expectFlat("malformed AdmissionReviews");
}

TEST_F(HostileInputTest, A20KBHeaderIs431AndA5MBBodyIs413) {
  ClientRequest header = w().request(std::string(guard::kGuardPath));
  header.method = "POST";
  header.headers = {"X-Filler: " + std::string(std::size_t{20} * 1000, 'h')};
  header.body = "{}";
  ClientReply reply = test_kit::requestOnce(header);
  ASSERT_EQ(reply.code, CURLE_OK) << reply.error;
  EXPECT_EQ(reply.status, 431);

  ClientRequest body = w().request(std::string(guard::kGuardPath));
  body.method = "POST";
  body.body = std::string(std::size_t{5} * 1000 * 1000, 'b');
  reply = test_kit::requestOnce(body);
  ASSERT_EQ(reply.code, CURLE_OK) << reply.error;
  EXPECT_EQ(reply.status, 413);
  // The metrics API's routes take no body at all.
  ClientRequest metrics_body = w().asFrontProxy(w().metricPath("labelSelector=shardset%3Dmain"));
  metrics_body.body = std::string(1000, 'b');
  EXPECT_EQ(test_kit::requestOnce(metrics_body).status, 413);
  expectFlat("20 KB header, 5 MB body");
}

// Beast counts chunk extensions against no limit: a connection sending them for ever grew the
// server without bound.
TEST_F(HostileInputTest, AChunkExtensionFloodIsRefusedWithinTheFirstKilobytesAndRssStaysFlat) {
  const std::string chunked = std::string("POST ") + std::string(guard::kGuardPath) +
                              " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  // A few kilobytes are enough to be refused: 12 KiB of one extension, then nothing more.
  {
    auto client = w().raw();
    ASSERT_TRUE(client);
    ASSERT_TRUE(client->send(chunked + "1;" + std::string(std::size_t{12} * 1024, 'e')));
    EXPECT_EQ(client->readResponse().status, 400) << "no answer after 12 KiB of extension";
  }
  {
    std::string many = chunked;
    for (int i = 0; i < 40; ++i) many += "1;x=" + std::string(100, 'e') + "\r\n{\r\n";
    EXPECT_EQ(w().statusFor(many), 400);
  }
  // The flood: 8 connections at once, each sending up to 16 MiB of one extension, again and again.
  RssSampler sampler(w().shardscaler->pid());
  constexpr int kConnections = 8;
  constexpr int kRounds = 6;
  std::atomic<int> refused{0};
  std::atomic<int> rounds{0};
  std::vector<std::thread> threads;
  threads.reserve(kConnections);
  for (int t = 0; t < kConnections; ++t) {
    threads.emplace_back([&] {
      const std::string piece(std::size_t{64} * 1024, 'e');
      for (int round = 0; round < kRounds; ++round) {
        auto client = w().raw({.timeout = 10s});
        if (!client) continue;
        ++rounds;
        if (!client->send(chunked + "1;")) continue;
        for (int i = 0; i < 256 && client->send(piece); ++i) {
        }
        if (client->readResponse().status == 400 || client->closedByServer()) ++refused;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const long peak = sampler.stopNow();
  const Memory after = w().memory();
  std::cout << "[ memory   ] chunk-extension flood (" << rounds << " connections, " << kConnections
            << " at once): RSS peak " << mib(peak) << ", VmHWM " << mib(after.peak_kib) << "\n";
  EXPECT_EQ(refused.load(), rounds.load());
  EXPECT_LT(peak, kPeakBoundKiB);
  EXPECT_LT(after.peak_kib, kPeakBoundKiB);
  expectFlat("chunk-extension flood");
}

// 80 clients upload 4 MB at once, with a Content-Length and chunked: each is refused before its
// body is in memory, or within the bodies-in-flight budget.
TEST_F(HostileInputTest, EightyParallel4MBUploadsStayUnder64MiB) {
  constexpr int kUploads = 80;
  constexpr std::size_t kBody = std::size_t{4} * 1000 * 1000;
  const std::string path(guard::kGuardPath);
  for (const bool chunked : {false, true}) {
    RssSampler sampler(w().shardscaler->pid());
    std::mutex mutex;
    std::map<int, int> statuses;
    std::vector<std::thread> threads;
    threads.reserve(kUploads);
    for (int t = 0; t < kUploads; ++t) {
      threads.emplace_back([&] {
        int status = -1;
        if (auto client = w().raw({.timeout = 20s})) {
          std::string head = "POST " + path +
                             " HTTP/1.1\r\nHost: x\r\nContent-Type: "
                             "application/json\r\n";
          head += chunked ? "Transfer-Encoding: chunked\r\n\r\n"
                          : "Content-Length: " + std::to_string(kBody) + "\r\n\r\n";
          const std::size_t piece = std::size_t{64} * 1024;
          bool sending = client->send(head);
          for (std::size_t sent = 0; sending && sent < kBody; sent += piece) {
            const std::string data(std::min(piece, kBody - sent), 'u');
            sending = client->send(chunked ? hex(data.size()) + "\r\n" + data + "\r\n" : data);
          }
          if (sending && chunked) client->send("0\r\n\r\n");
          status = client->readResponse().status;
        }
        std::lock_guard lock(mutex);
        ++statuses[status];
      });
    }
    for (auto& thread : threads) thread.join();
    const long peak = sampler.stopNow();
    const Memory after = w().memory();
    std::ostringstream seen;
    for (const auto& [status, count] : statuses) seen << " " << status << "x" << count;
    std::cout << "[ memory   ] " << kUploads << " parallel 4 MB uploads ("
              << (chunked ? "chunked" : "Content-Length") << "): RSS peak " << mib(peak)
              << ", VmHWM " << mib(after.peak_kib) << "; answers" << seen.str() << "\n";
    EXPECT_LT(peak, kPeakBoundKiB);
    EXPECT_LT(after.peak_kib, kPeakBoundKiB);
    // Refused (413: too large, 503: too many bodies in flight) or cut while sending: never
    // taken.
    for (const auto& [status, count] : statuses) {
      EXPECT_THAT(status, AnyOf(413, 503, 0)) << count << " answered " << status;
    }
    EXPECT_GT(statuses[413], 0);
  }
  expectFlat("80 parallel 4 MB uploads");
}

// ---- protocols ----

TEST_F(HostileInputTest, Http10Http20AndGarbageRequestLines) {
  const std::string path(guard::kGuardPath);
  auto old = w().raw();
  ASSERT_TRUE(old);
  ASSERT_TRUE(old->send("POST " + path + " HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}"));
  const auto answer = old->readResponse();
  EXPECT_EQ(answer.status, 400);  // an answer from the guard: not an AdmissionReview
  EXPECT_THAT(answer.body, HasSubstr("AdmissionReview: apiVersion: missing"));
  EXPECT_TRUE(old->closedByServer());  // HTTP/1.0 without keep-alive
  EXPECT_EQ(w().statusFor("GET /openapi/v2 HTTP/1.0\r\n\r\n"), 401);
  EXPECT_EQ(w().statusFor("GET / HTTP/2.0\r\nHost: x\r\n\r\n"), 505);
  EXPECT_EQ(w().statusFor("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 505);
  EXPECT_EQ(w().statusFor("GARBAGE\r\n\r\n"), 400);
  EXPECT_EQ(w().statusFor("GET /\x01\x02 HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(w().statusFor(std::string("\0\0\0\0\r\n\r\n", 8)), 400);
  expectFlat("HTTP/1.0, HTTP/2.0, garbage");
}

TEST_F(HostileInputTest, Tls11IsRefusedAndTls12SessionsResume) {
  RawTlsClient tls11(w().webhook.port, RawTlsClient::Options{.ca_pem = w().ca_pem,
                                                             .min_version = TLS1_VERSION,
                                                             .max_version = TLS1_1_VERSION});
  ASSERT_TRUE(tls11.connect());
  EXPECT_FALSE(tls11.handshake());

  test_kit::HttpClient client;  // keeps the TLS session between its connections
  ClientRequest r = w().request("/nothing-here");
  r.ssl_version = long{CURL_SSLVERSION_TLSv1_2} | long{CURL_SSLVERSION_MAX_TLSv1_2};
  r.headers = {"Connection: close"};
  const ClientReply first = client.perform(r);
  ASSERT_EQ(first.code, CURLE_OK) << first.error;
  EXPECT_EQ(first.tls_version, "TLSv1.2");
  const ClientReply second = client.perform(r);
  ASSERT_EQ(second.code, CURLE_OK) << second.error;
  EXPECT_EQ(second.status, 404);
  EXPECT_TRUE(second.tls_session_reused);
  expectFlat("TLS 1.1, TLS 1.2 resumption");
}

// ---- item 5: update-then-delete, through the real API server ----

TEST_F(HostileInputTest, UpdateThenDeleteSequencesAreRefused) {
  const std::string& ns = w().ns;
  const std::string active = handBuiltShardName(1);
  const std::string retained = handBuiltShardName(3);
  // update.guard sees the StatefulSets that are not retained, retained.guard the retained ones;
  // a step that adds or removes shardscaler.io/retained is seen by both, and either may answer.
  const std::string updates =
      R"(admission webhook "(update|retained)\.guard\.shardscaler\.io" denied the )"
      "request: shardscaler guard: rule ";
  struct Step {
    std::string what;
    std::string args;
    std::string rule;
  };
  const std::vector<Step> steps = {
      {"shard index to 999",
       "label statefulset " + active +
           " operator.prometheus.io/shard=999 "
           "--overwrite",
       "GuardedMetadata"},
      {"release by hand", "label statefulset " + active + " shardscaler.io/shardset-",
       "GuardedMetadata"},
      {"detach by hand",
       "patch statefulset " + active + " --type=merge -p '" +
           Json{{"metadata",
                 {{"labels",
                   {{"operator.prometheus.io/name", nullptr}, {"shardscaler.io/retained", "true"}}},
                  {"annotations",
                   {{"operator.prometheus.io/deletion-timestamp", "2020-01-01T00:00:00Z"}}}}}}
               .dump() +
           "'",
       "GuardedMetadata"},
      {"deadline moved back",
       "annotate statefulset " + retained +
           " operator.prometheus.io/deletion-timestamp=2020-01-01T00:00:00Z --overwrite",
       "GuardedMetadata"},
      {"shardscaler's own deadline moved back",
       "annotate statefulset " + retained +
           " shardscaler.io/deletion-deadline=2020-01-01T00:00:00Z --overwrite",
       "GuardedMetadata"},
      {"deadline removed",
       "annotate statefulset " + retained + " operator.prometheus.io/deletion-timestamp-",
       "GuardedMetadata"},
      {"re-attach, step one", "label statefulset " + retained + " shardscaler.io/retained-",
       "GuardedMetadata"},
      {"re-attach, step two", "label statefulset " + retained + " operator.prometheus.io/name=main",
       "Reattach"},
  };
  for (const auto& step : steps) {
    const auto r = w().asUser(step.args + " -n " + ns);
    EXPECT_NE(r.exit_code, 0) << step.what << " was allowed";
    EXPECT_THAT(r.err, ContainsRegex(updates + step.rule)) << step.what;
  }
  // And the deletes those steps were for: still refused.
  auto del_active = w().asUser("delete statefulset " + active + " -n " + ns);
  EXPECT_THAT(del_active.err, HasSubstr("rule ActiveShard"));
  auto del_retained = w().asUser("delete statefulset " + retained + " -n " + ns);
  EXPECT_THAT(del_retained.err, HasSubstr("rule RetainedBeforeDeadline"));
  EXPECT_TRUE(intact(ns, active));
  EXPECT_TRUE(intact(ns, retained));
  const Json shard = getOrNull(k8s::resources::statefulSets(), ns, active);
  EXPECT_EQ(shard["metadata"]["labels"].value("operator.prometheus.io/shard", ""), "1");
  EXPECT_EQ(shard["metadata"]["labels"].value("shardscaler.io/shardset", ""), "main");
  // What changes nothing the rules read passes.
  const auto plain = w().asUser("label statefulset " + active + " team=a -n " + ns);
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_GE(
      metricSum(*w().shardscaler, "shardscaler_guard_denials_total", R"(rule="GuardedMetadata")")
          .value_or(0),
      6);
  expectFlat("update-then-delete");
}

// Last: it restarts shardscaler so that the API server has no connection to it before the
// sockets are opened.
TEST_F(HostileInputTest, ThreeHundredIdleTlsSocketsDoNotLockOutTheApiServer) {
  w().startShardscaler();
  before_ = w().memory();
  std::vector<std::unique_ptr<RawTlsClient>> idle(300);
  std::vector<std::thread> openers;
  openers.reserve(4);
  std::atomic<int> opened{0};
  for (int t = 0; t < 4; ++t) {
    openers.emplace_back([&, t] {
      for (std::size_t i = t; i < idle.size(); i += 4) {
        idle[i] = w().raw();
        if (idle[i]) ++opened;
      }
    });
  }
  for (auto& thread : openers) thread.join();
  std::cout << "[ idle     ] " << opened << " idle TLS sockets open\n";
  EXPECT_GE(opened.load(), 256);

  const auto started = std::chrono::steady_clock::now();
  const auto r = w().asUser("delete statefulset " + handBuiltShardName(0) + " -n " + w().ns +
                            " --dry-run=server");
  const auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started);
  std::cout << "[ idle     ] dry-run delete answered by the guard in " << took.count() << " s\n";
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("admission webhook \"delete.guard.shardscaler.io\" denied the "
                               "request: shardscaler guard: rule ActiveShard"));
  EXPECT_THAT(r.err, Not(HasSubstr("failed calling webhook")));
  EXPECT_TRUE(intact(w().ns, handBuiltShardName(0)));
  for (const char* probe : {"/healthz", "/readyz"}) {
    EXPECT_EQ(w().shardscaler->httpGet(w().shardscaler->probePort(), probe).first, 200) << probe;
  }
  // While they are open the sockets hold their TLS state; what must hold is the bound, not a
  // return to the level of a freshly started process (the allocator keeps what it freed).
  const Memory held = w().memory();
  idle.clear();
  std::cout << "[ memory   ] 300 idle TLS sockets: RSS " << mib(before_.rss_kib) << " before, "
            << mib(held.rss_kib) << " while open, peak " << mib(held.peak_kib) << "\n";
  EXPECT_LT(held.peak_kib, kPeakBoundKiB);
  EXPECT_TRUE(w().shardscaler->running());
}

}  // namespace
}  // namespace shardscaler::e2e
