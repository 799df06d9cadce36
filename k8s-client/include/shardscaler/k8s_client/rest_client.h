// KubeClient over HTTPS with libcurl: pooled keep-alive connections, TLS and bearer-token
// auth from a KubeConfig, streamed watches. It never retries by itself; callers decide.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/k8s_client/kube_config.h"

namespace shardscaler::k8s {

// One finished request, for metrics: verb is the Kubernetes verb ("get", "list", "create",
// "update", "patch", "delete", "watch"), resource is Resource::describe() ("" for a raw path),
// http_status is 0 when no response arrived. Watches are reported when they end.
struct RequestRecord {
  std::string_view verb;
  std::string_view resource;
  int http_status = 0;
  std::chrono::nanoseconds latency{};
};
using RequestObserver = std::function<void(const RequestRecord&)>;

struct RestClientOptions {
  // Monotonic time for latency and for the token file's re-read interval.
  std::shared_ptr<const Clock> clock = std::make_shared<RealClock>();
  // Called on the requesting thread after every request; must be cheap and thread-safe.
  RequestObserver observer;
  // Idle connections kept for reuse; requests beyond this many in parallel open new ones.
  size_t max_idle_connections = 8;
  // Sent as `fieldManager` with every create, update and patch ("" sends none, and the API
  // server names the manager after the user agent). The API server records it in
  // managedFields and shows it to admission webhooks in the request's options, which is how
  // the shard guard tells shardscaler's own writes from another client's with the same user.
  std::string field_manager;
};

class RestClient final : public KubeClient {
 public:
  explicit RestClient(KubeConfig config, RestClientOptions options = {});
  ~RestClient() override;
  RestClient(const RestClient&) = delete;
  RestClient& operator=(const RestClient&) = delete;

  Result<Json> get(const Resource& r, const std::string& ns, const std::string& name,
                   const std::string& subresource = {}) override;
  Result<Json> list(const Resource& r, const std::string& ns,
                    const ListOptions& opts = {}) override;
  Result<Json> create(const Resource& r, const std::string& ns, const Json& obj) override;
  Result<Json> update(const Resource& r, const std::string& ns, const Json& obj,
                      const std::string& subresource = {}) override;
  Result<Json> patch(const Resource& r, const std::string& ns, const std::string& name,
                     PatchType type, const Json& patch,
                     const std::string& subresource = {}) override;
  // Asks for PartialObjectMetadata when read.metadata_only, and decodes only read.fields.
  Result<Json> patchReading(const Resource& r, const std::string& ns, const std::string& name,
                            PatchType type, const Json& patch, const std::string& subresource,
                            const AnswerFields& read) override;
  Result<Json> remove(const Resource& r, const std::string& ns, const std::string& name,
                      const DeleteOptions& opts = {}) override;
  Result<void> watch(const Resource& r, const std::string& ns, const WatchOptions& opts,
                     const WatchHandler& handler, const std::atomic<bool>* stop = nullptr) override;

  // GET of a path that is not a resource ("/version", "/readyz"); the body as JSON, or as a
  // JSON string when it is not JSON.
  Result<Json> getPath(const std::string& path);

  const KubeConfig& config() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace shardscaler::k8s
