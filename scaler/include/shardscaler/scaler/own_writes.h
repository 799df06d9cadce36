// Which object versions a reconcile of which ShardSet wrote, so that the watch events echoing
// them do not queue that ShardSet again. It must never hide an event of anyone else's write.
#pragma once

#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "shardscaler/k8s_client/kube_client.h"

namespace shardscaler::scaler {

// A watch event is the echo of a write when its object carries exactly the resourceVersion the
// API server answered that write with: a resourceVersion names one write of one object. The
// record is filled by OwnWritesClient and read by the informers' event handlers.
//
// Thread-safety: all methods may be called from any thread.
class OwnWrites {
 public:
  // While a Scope lives, writes an OwnWritesClient makes on this thread are recorded as made by
  // the reconcile of ShardSet `writer` ("namespace/name"). A thread-local, because the writes
  // are made deep inside the PlanApplier, which knows nothing of who it writes for.
  class Scope {
   public:
    explicit Scope(std::string writer);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    std::string writer_;
    const std::string* previous_;
  };

  // The ShardSet whose reconcile is running on this thread (nullptr: none).
  static const std::string* currentWriter();

  // `answer` is what the API server returned for a write of `resource` by `writer`.
  void record(const k8s::Resource& resource, const k8s::Json& answer, const std::string& writer);

  // For an update event (old_object -> new_object) of `resource`: the ShardSet whose reconcile
  // wrote exactly new_object's version, if one did. The record of that write and of any older
  // write of the object is dropped (events of one object arrive in order). nullopt for a resync
  // (the same version twice) and for every version not written through the record.
  std::optional<std::string> echoWriter(const k8s::Resource& resource, const k8s::Json& old_object,
                                        const k8s::Json& new_object);

  // The object is gone: its records can never match.
  void forget(const k8s::Resource& resource, const k8s::Json& object);

  // Objects with a write whose echo has not come (yet): for tests and the memory bound.
  std::size_t size() const;

  // Writes kept per object whose echoes have not come: a reconcile writes one object a few times
  // in a row (the ShardSet's bound annotation, then its status) before the first echo arrives.
  static constexpr std::size_t kPerObject = 4;

 private:
  struct Write {
    std::string resource_version;
    std::string writer;
  };
  mutable std::mutex mutex_;
  // "<resource>.<group>/<namespace>/<name>" -> its recorded writes, oldest first.
  std::unordered_map<std::string, std::deque<Write>> writes_;
};

// A KubeClient that forwards every call to `inner` and records each successful create, update
// and patch made inside an OwnWrites::Scope. Reads, watches and deletes are only forwarded.
class OwnWritesClient final : public k8s::KubeClient {
 public:
  // Both must outlive this client.
  OwnWritesClient(k8s::KubeClient& inner, OwnWrites& writes) : inner_(inner), writes_(writes) {}

  k8s::Result<k8s::Json> get(const k8s::Resource& r, const std::string& ns, const std::string& name,
                             const std::string& subresource) override;
  k8s::Result<k8s::Json> list(const k8s::Resource& r, const std::string& ns,
                              const k8s::ListOptions& opts) override;
  k8s::Result<k8s::Json> create(const k8s::Resource& r, const std::string& ns,
                                const k8s::Json& obj) override;
  k8s::Result<k8s::Json> update(const k8s::Resource& r, const std::string& ns, const k8s::Json& obj,
                                const std::string& subresource) override;
  k8s::Result<k8s::Json> patch(const k8s::Resource& r, const std::string& ns,
                               const std::string& name, k8s::PatchType type, const k8s::Json& patch,
                               const std::string& subresource) override;
  k8s::Result<k8s::Json> remove(const k8s::Resource& r, const std::string& ns,
                                const std::string& name, const k8s::DeleteOptions& opts) override;
  k8s::Result<void> watch(const k8s::Resource& r, const std::string& ns,
                          const k8s::WatchOptions& opts, const k8s::WatchHandler& handler,
                          const std::atomic<bool>* stop) override;

 private:
  k8s::Result<k8s::Json> recorded(const k8s::Resource& r, k8s::Result<k8s::Json> answer);

  k8s::KubeClient& inner_;
  OwnWrites& writes_;
};

}  // namespace shardscaler::scaler
