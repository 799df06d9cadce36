// An in-memory KubeClient for the serving unit tests: objects by resource/namespace/name, one
// resourceVersion counter, AlreadyExists, Conflict on a stale resourceVersion (update and JSON
// patch alike, as the API server), and hooks that fail or race a call. Unit tests only.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "shardscaler/k8s_client/kube_client.h"

namespace shardscaler::serving::testing {

using k8s::Json;

inline k8s::Error apiError(k8s::ErrorKind kind, int status, std::string message = "injected") {
  k8s::Error error;
  error.kind = kind;
  error.http_status = status;
  error.message = std::move(message);
  return error;
}

class FakeKubeClient final : public k8s::KubeClient {
 public:
  enum class Verb { Get, Create, Update, Patch };
  // Runs before a call is served (the client's lock not held); a returned error is the answer.
  using Hook = std::function<std::optional<k8s::Error>(Verb, const std::string& name)>;

  // ---- test side -------------------------------------------------------------------------
  Json put(const k8s::Resource& r, Json object);  // creates or replaces, no precondition
  std::optional<Json> find(const k8s::Resource& r, const std::string& ns,
                           const std::string& name) const;
  void setHook(Hook hook);
  int writes() const;  // successful create/update/patch calls
  // Every successful write of one object, in order.
  std::vector<Json> history(const k8s::Resource& r, const std::string& ns,
                            const std::string& name) const;

  // ---- KubeClient ------------------------------------------------------------------------
  k8s::Result<Json> get(const k8s::Resource& r, const std::string& ns, const std::string& name,
                        const std::string& subresource = {}) override;
  k8s::Result<Json> list(const k8s::Resource& r, const std::string& ns,
                         const k8s::ListOptions& opts = {}) override;
  k8s::Result<Json> create(const k8s::Resource& r, const std::string& ns, const Json& obj) override;
  k8s::Result<Json> update(const k8s::Resource& r, const std::string& ns, const Json& obj,
                           const std::string& subresource = {}) override;
  k8s::Result<Json> patch(const k8s::Resource& r, const std::string& ns, const std::string& name,
                          k8s::PatchType type, const Json& patch,
                          const std::string& subresource = {}) override;
  k8s::Result<Json> remove(const k8s::Resource& r, const std::string& ns, const std::string& name,
                           const k8s::DeleteOptions& opts = {}) override;
  k8s::Result<void> watch(const k8s::Resource& r, const std::string& ns,
                          const k8s::WatchOptions& opts, const k8s::WatchHandler& handler,
                          const std::atomic<bool>* stop = nullptr) override;

 private:
  using Key = std::tuple<std::string, std::string, std::string>;
  static Key key(const k8s::Resource& r, const std::string& ns, const std::string& name);
  std::optional<k8s::Error> runHook(Verb verb, const std::string& name);
  Json stampLocked(const Key& key, Json object);

  mutable std::mutex mutex_;
  std::map<Key, Json> objects_;
  std::map<Key, std::vector<Json>> history_;
  long resource_version_ = 100;
  int writes_ = 0;
  Hook hook_;
};

}  // namespace shardscaler::serving::testing
