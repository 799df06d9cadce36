// The external metrics API behind the real aggregator, for its integration test and its
// benchmark: kube-apiserver 1.20 started with the aggregation-layer flags (request-header CA,
// allowed names, proxy client certificate, --enable-aggregator-routing), an APIService pointing at
// MetricsApiHandler served by HttpServer, and ShardSets in etcd. The aggregator refuses loopback
// endpoints, so startAggregation() moves the process into a network namespace of its own
// (unshare(CLONE_NEWNET)) where `lo` also carries 10.200.0.1; the namespace goes away with the
// process, whatever happens to it. Tests and benchmarks only.
#pragma once

#include <sched.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscaler/certificates/certificate_authority.h"
#include "shardscaler/certificates/certificate_source.h"
#include "shardscaler/k8s_client/base64.h"
#include "shardscaler/k8s_client/kube_config.h"
#include "shardscaler/k8s_client/rest_client.h"
#include "shardscaler/metrics_api/front_proxy_config_watch.h"
#include "shardscaler/metrics_api/metrics_api_handler.h"
#include "shardscaler/serving/http_server.h"
#include "shardscaler/test_kit/eventually.h"
#include "shardscaler/test_kit/http_client.h"
#include "shardscaler/test_kit/temp_dir.h"
#include "shardscaler/testenv/control_plane.h"

#include "../unit/certificates/tls_test_support.h"

namespace shardscaler::metrics_api::aggregation {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kAddress = "10.200.0.1";
constexpr const char* kNamespace = "monitoring";
constexpr const char* kService = "shardscaler-metrics-api";
// How often a wait looks again: each look runs kubectl.
constexpr auto kPoll = 100ms;

inline std::string rfc3339(std::chrono::system_clock::time_point t) {
  const std::time_t s = std::chrono::system_clock::to_time_t(t);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&s));
  return buf;
}

inline void writeFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
  std::filesystem::permissions(
      path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

// Everything the suite shares: one control plane, one served API.
struct Aggregation {
  test_kit::TempDir dir;  // first member, so it goes last: the API server reads its files
  certificates::CertificateAuthority front_proxy_ca;
  certificates::KeyedCertificate proxy_client;
  certificates::CertificateAuthority serving_ca;
  std::unique_ptr<testenv::ControlPlane> control_plane;
  std::unique_ptr<k8s::RestClient> client;
  std::shared_ptr<k8s::RealClock> clock = std::make_shared<k8s::RealClock>();
  RequestHeaderConfigSlot config;
  std::shared_ptr<certificates::TrustBundleSlot> trust =
      std::make_shared<certificates::TrustBundleSlot>();
  std::unique_ptr<FrontProxyConfigWatch> watch;
  std::unique_ptr<MetricsApiHandler> handler;
  std::unique_ptr<serving::HttpServer> server;
  std::uint16_t port = 0;
};

// Created by startAggregation, destroyed by stopAggregation (the control plane's destructor stops
// its servers); a failed start destroys what it made on the way out of the exception.
inline std::unique_ptr<Aggregation> env;

inline std::string runOrThrow(const std::string& command) {
  if (std::system(command.c_str()) != 0) throw std::runtime_error("failed: " + command);
  return command;
}

inline certificates::CertificateAuthority makeCa(const std::string& name) {
  const auto now = std::chrono::system_clock::now();
  auto ca = certificates::CertificateAuthority::generate(name, now - 1h, now + 4h);
  if (!ca) throw std::runtime_error(ca.error());
  return std::move(*ca);
}

inline void apply(const std::string& yaml) {
  std::string err;
  if (env->control_plane->kubectl("apply -f -", nullptr, &err, yaml) != 0) {
    throw std::runtime_error("kubectl apply: " + err + "\n" + yaml);
  }
}

inline void startServers(Aggregation* e) {
  writeFile(e->dir.path() / "front-proxy-ca.crt", e->front_proxy_ca.certificate().pem());
  writeFile(e->dir.path() / "front-proxy-client.crt", e->proxy_client.certificate.pem());
  writeFile(e->dir.path() / "front-proxy-client.key", e->proxy_client.key.pem());

  testenv::ControlPlaneOptions options;
  options.start_controller_manager = false;
  options.extra_apiserver_flags = {
      "--requestheader-client-ca-file=" + (e->dir.path() / "front-proxy-ca.crt").string(),
      "--requestheader-allowed-names=front-proxy-client",
      "--requestheader-username-headers=X-Remote-User",
      "--requestheader-group-headers=X-Remote-Group",
      "--requestheader-extra-headers-prefix=X-Remote-Extra-",
      "--proxy-client-cert-file=" + (e->dir.path() / "front-proxy-client.crt").string(),
      "--proxy-client-key-file=" + (e->dir.path() / "front-proxy-client.key").string(),
      // Dial the Endpoints' address, not the Service's cluster IP (there is no kube-proxy).
      "--enable-aggregator-routing=true"};
  e->control_plane = std::make_unique<testenv::ControlPlane>(options);
  auto config = k8s::loadKubeconfigFiles({e->control_plane->kubeconfigPath()});
  if (!config) throw std::runtime_error(config.error().describe());
  config->request_timeout = 5s;
  e->client = std::make_unique<k8s::RestClient>(*config);

  // What shardscaler::app::MetricsApiServer does in `shardscaler run`.
  e->watch = std::make_unique<FrontProxyConfigWatch>(*e->client, *e->clock, e->config, *e->trust);
  e->watch->start();
  e->handler = std::make_unique<MetricsApiHandler>(*e->client, *e->clock, e->config,
                                                   MetricsApiHandlerOptions{});
  const std::string host = std::string(kService) + "." + kNamespace + ".svc";
  const auto now = std::chrono::system_clock::now();
  auto issued = e->serving_ca.issue({.common_name = host,
                                     .hosts = {host, kAddress},
                                     .not_before = now - 1h,
                                     .not_after = now + 3h});
  if (!issued) throw std::runtime_error(issued.error());
  auto certificate = certificates::ServingCertificate::fromPem(
      issued->certificate.pem(), issued->key.pem(), e->serving_ca.certificate().pem());
  if (!certificate) throw std::runtime_error(certificate.error());
  e->server = std::make_unique<serving::HttpServer>(serving::HttpServer::Options{
      .address = {kAddress, 0},
      .certificates = std::make_shared<certificates::CertificateSlot>(*certificate),
      .client_certificates = serving::ClientCertificateMode::Request,
      .client_trust = e->trust,
      .workers = 2});
  const auto handle = [e](const serving::Request& r) { return e->handler->handle(r); };
  e->server->handlePrefix("*", "/apis", handle);
  e->server->handle("*", "/openapi/v2", handle);
  auto port = e->server->start();
  if (!port) throw std::runtime_error(port.error());
  e->port = *port;

  const std::string crd =
      std::string(SHARDSCALER_SOURCE_DIR) + "/deploy/crds/shardscaler.io_shardsets.yaml";
  std::string err;
  if (e->control_plane->kubectl("apply -f " + crd, nullptr, &err) != 0) {
    throw std::runtime_error("apply the CRD: " + err);
  }
  apply(R"(apiVersion: v1
kind: Namespace
metadata: {name: monitoring}
---
apiVersion: v1
kind: Service
metadata: {name: shardscaler-metrics-api, namespace: monitoring}
spec:
  ports: [{name: https, port: 443, targetPort: )" +
        std::to_string(e->port) + R"(}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: shardscaler-metrics-api, namespace: monitoring}
subsets:
- addresses: [{ip: )" +
        std::string(kAddress) +
        R"(}]
  ports: [{name: https, port: )" +
        std::to_string(e->port) + R"(}]
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.external.metrics.k8s.io}
spec:
  group: external.metrics.k8s.io
  version: v1beta1
  groupPriorityMinimum: 100
  versionPriority: 100
  service: {name: shardscaler-metrics-api, namespace: monitoring, port: 443}
  caBundle: )" +
        k8s::base64Encode(e->serving_ca.certificate().pem()) + "\n");
  const bool available = test_kit::eventually(180s, kPoll, [] {
    std::string out;
    env->control_plane->kubectl(
        "get apiservice v1beta1.external.metrics.k8s.io -o "
        "jsonpath='{.status.conditions[?(@.type==\"Available\")].status}'",
        &out);
    return out == "True";
  });
  if (!available) {
    std::string out;
    env->control_plane->kubectl("get apiservice v1beta1.external.metrics.k8s.io -o yaml", &out);
    throw std::runtime_error("the APIService did not become Available:\n" + out);
  }
  // Available is set a moment before the aggregator routes the group-version to the backend.
  const bool routed = test_kit::eventually(60s, kPoll, [] {
    std::string out;
    return env->control_plane->kubectl("get --raw /apis/external.metrics.k8s.io/v1beta1", &out) ==
           0;
  });
  if (!routed) throw std::runtime_error("the aggregator did not route external.metrics.k8s.io");
}

inline void stopAggregation() {
  if (!env) return;
  if (env->server) env->server->stop();
  if (env->watch) env->watch->stop();
  env.reset();
}

inline void startAggregation() {
  // Before any thread or child exists: they all inherit this network namespace.
  if (::unshare(CLONE_NEWNET) != 0) {
    throw std::runtime_error(std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno));
  }
  runOrThrow("ip link set lo up");
  runOrThrow(std::string("ip addr add ") + kAddress + "/32 dev lo");

  auto front_proxy_ca = makeCa("front-proxy-ca");
  auto proxy_client =
      certificates::testing::issueClientCertificate(front_proxy_ca, "front-proxy-client");
  env.reset(new Aggregation{.dir = test_kit::TempDir("shardscaler-aggregation-"),
                            .front_proxy_ca = std::move(front_proxy_ca),
                            .proxy_client = std::move(proxy_client),
                            .serving_ca = makeCa("shardscaler-metrics-api-ca")});
  Aggregation* e = env.get();
  try {
    startServers(e);
  } catch (...) {
    stopAggregation();
    throw;
  }
}

inline void putShardSet(const std::string& name, const std::string& last_update) {
  apply(R"(apiVersion: shardscaler.io/v1alpha1
kind: ShardSet
metadata: {name: )" +
        name + R"(, namespace: monitoring}
spec:
  targetRef: {kind: Prometheus, name: )" +
        name + R"(}
  shards: 2
  ingestion: {prometheusURL: "http://127.0.0.1:9", interval: 30s, targetSamplesPerShard: 1000}
)");
  const json status = {{"status",
                        {{"targetShards", 2},
                         {"recommendedShards", 2},
                         {"ingestion",
                          {{"perShard",
                            {{{"index", 0}, {"samplesPerSecond", 1500.25}},
                             {{"index", 1}, {"samplesPerSecond", 499.5}}}},
                           {"lastUpdate", last_update}}}}}};
  auto patched = env->client->patch({"shardscaler.io", "v1alpha1", "shardsets", true}, kNamespace,
                                    name, k8s::PatchType::Merge, status, "status");
  if (!patched) throw std::runtime_error("status: " + patched.error().describe());
}

// `kubectl get --raw`, as the admin (through the aggregator).
inline int raw(const std::string& path, std::string* out, std::string* err = nullptr) {
  return env->control_plane->kubectl("get --raw '" + path + "'", out, err);
}

// A request straight to the served API, with or without a client certificate.
inline test_kit::ClientReply direct(const std::string& path,
                                    const certificates::KeyedCertificate* certificate,
                                    std::vector<std::string> headers = {}) {
  test_kit::ClientRequest r;
  r.url = "https://" + std::string(kAddress) + ":" + std::to_string(env->port) + path;
  r.ca_pem = env->serving_ca.certificate().pem();
  r.headers = std::move(headers);
  if (certificate != nullptr) {
    r.client_certificate_pem = certificate->certificate.pem();
    r.client_key_pem = certificate->key.pem();
  }
  return test_kit::requestOnce(r);
}

}  // namespace shardscaler::metrics_api::aggregation
