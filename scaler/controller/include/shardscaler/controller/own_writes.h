// Which object versions a reconcile of which ShardSet wrote, so that the watch events echoing
// them do not queue that ShardSet again. It must never hide an event of anyone else's write.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "shardscaler/k8s_client/kube_client.h"

namespace shardscaler::controller {

// A watch event is the echo of a write when its object carries exactly the resourceVersion the
// API server answered that write with: a resourceVersion names one write of one object. The
// record is filled by OwnWritesClient and read by the informers' event handlers.
//
// Thread-safety: all methods may be called from any thread.
class OwnWrites {
 public:
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

  // The resourceVersion of the newest StatefulSet written through the record (0: none yet). A
  // read at least this new shows every StatefulSet write of earlier plans (shard_set_reader.cc).
  // nullopt once a write was answered with a version that is not a number: versions that cannot
  // be ordered name no floor, and the reads after them must be quorum reads.
  std::optional<std::uint64_t> newestStatefulSetWrite() const;

  // Writes kept per object whose echoes have not come: a reconcile writes one object a few times
  // in a row (the ShardSet's bound annotation, then its status) before the first echo arrives.
  static constexpr std::size_t kPerObject = 4;

 private:
  struct Write {
    std::string resource_version;
    std::string writer;
  };
  void noteStatefulSetWrite(const std::string& resource_version);

  mutable std::mutex mutex_;
  // "<resource>.<group>/<namespace>/<name>" -> its recorded writes, oldest first.
  std::unordered_map<std::string, std::deque<Write>> writes_;
  std::atomic<std::uint64_t> newest_stateful_set_write_{0};
  std::atomic<bool> unordered_stateful_set_write_{false};
};

// A KubeClient for the writes of one reconcile, of the ShardSet `writer` ("namespace/name"): it
// forwards every call to `inner` and records each successful create, update, patch and delete
// as that ShardSet's. One per reconcile, so that writes the PlanApplier sends from threads of
// its own are attributed too. Reads and watches are only forwarded.
class OwnWritesClient final : public k8s::KubeClient {
 public:
  // inner and writes must outlive this client.
  OwnWritesClient(k8s::KubeClient& inner, OwnWrites& writes, std::string writer)
      : inner_(inner), writes_(writes), writer_(std::move(writer)) {}

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
  k8s::Result<k8s::Json> patchReading(const k8s::Resource& r, const std::string& ns,
                                      const std::string& name, k8s::PatchType type,
                                      const k8s::Json& patch, const std::string& subresource,
                                      const k8s::AnswerFields& read) override;
  k8s::Result<k8s::Json> remove(const k8s::Resource& r, const std::string& ns,
                                const std::string& name, const k8s::DeleteOptions& opts) override;
  k8s::Result<void> watch(const k8s::Resource& r, const std::string& ns,
                          const k8s::WatchOptions& opts, const k8s::WatchHandler& handler,
                          const std::atomic<bool>* stop) override;

 private:
  k8s::Result<k8s::Json> recorded(const k8s::Resource& r, k8s::Result<k8s::Json> answer);

  k8s::KubeClient& inner_;
  OwnWrites& writes_;
  const std::string writer_;
};

}  // namespace shardscaler::controller
