// What the controller expects to see of its own writes, after the pattern of kubernetes'
// ControllerExpectations: a reconcile records what it wrote and what its last live read saw; the
// watch events that only echo those writes are told apart from anyone else's change, and a later
// reconcile plans from the caches only once they show at least as much. It must never hide an
// event of anyone else's write, nor let a plan trust caches that are behind a write of ours.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "shardscaler/k8s_client/kube_client.h"

namespace shardscaler::controller {

// Two records, one per kind of key:
// - per object: the resourceVersions the API server answered our writes with, each with the
//   ShardSet whose reconcile wrote it. A watch event is the echo of a write when its object
//   carries exactly that version: a resourceVersion names one write of one object.
// - per ShardSet: the floor its caches must reach before a plan from them is trusted, or that
//   the next reconcile reads live whatever the caches show.
// Filled by RecordingClient and the reconcilers; read by the informers' event handlers and the
// reader. Versions are ordered only where docs/design/reads.md says why that is safe.
//
// Thread-safety: all methods may be called from any thread.
class Expectations {
 public:
  // What the caches of one ShardSet must show: the target at least at target_version, the
  // StatefulSet informer synced at least to shards_version (0: anything).
  struct CacheFloor {
    std::uint64_t target_version = 0;
    std::uint64_t shards_version = 0;
    // Never for a version that is not a number: it cannot be ordered, so it proves nothing.
    bool shownBy(std::string_view target_version, std::string_view shards_version) const;
  };

  // After a reconcile that wrote only what the caches' echoes confirm (a claim, guard labels),
  // how soon the next one looks: the echoes take milliseconds; caches still behind then are
  // read past, live.
  static constexpr std::chrono::milliseconds kEchoWait{200};

  // Writes kept per object whose echoes have not come: a reconcile writes one object a few times
  // in a row (the ShardSet's bound annotation, then its status) before the first echo arrives.
  static constexpr std::size_t kPerObject = 4;

  // `answer` is what the API server returned for a write of `resource` by `writer`.
  void recordWrite(const k8s::Resource& resource, const k8s::Json& answer,
                   const std::string& writer);

  // For an update event (old_object -> new_object) of `resource`: the ShardSet whose reconcile
  // wrote exactly new_object's version, if one did. The record of that write and of any older
  // write of the object is dropped (events of one object arrive in order). nullopt for a resync
  // (the same version twice) and for every version not written through the record.
  std::optional<std::string> echoWriter(const k8s::Resource& resource, const k8s::Json& old_object,
                                        const k8s::Json& new_object);

  // The object is gone: its records can never match.
  void forgetObject(const k8s::Resource& resource, const k8s::Json& object);

  // Objects with a write whose echo has not come (yet): for tests and the memory bound.
  std::size_t pendingEchoes() const;

  // The resourceVersion of the newest StatefulSet written through the record (0: none yet). A
  // read at least this new shows every StatefulSet write of earlier plans (shard_set_reader.cc).
  // nullopt once a write was answered with a version that is not a number: versions that cannot
  // be ordered name no floor, and the reads after them must be quorum reads.
  std::optional<std::uint64_t> newestStatefulSetWrite() const;

  // The caches of the ShardSet `key` ("namespace/name") must show `floor` before the next plan
  // from them: what its last live read saw, or what its last writes were answered with.
  void expectCaches(const std::string& key, CacheFloor floor);
  // Its next reconcile reads live whatever the caches show: the last one stopped early, failed
  // or released its target.
  void expectLiveRead(const std::string& key);
  // The floor for the ShardSet `key`; nullopt: read live. A ShardSet nothing was recorded for
  // has the zero floor: synced caches show it.
  std::optional<CacheFloor> cacheFloor(const std::string& key) const;
  // The ShardSet is gone.
  void forgetShardSet(const std::string& key);

 private:
  struct Write {
    std::string resource_version;
    std::string writer;
  };
  void noteStatefulSetWrite(const std::string& resource_version);

  mutable std::mutex mutex_;
  // "<resource>.<group>/<namespace>/<name>" -> its recorded writes, oldest first.
  std::unordered_map<std::string, std::deque<Write>> writes_;
  // "<namespace>/<name>" of a ShardSet -> its floor; nullopt: read live.
  std::map<std::string, std::optional<CacheFloor>> floors_;
  std::atomic<std::uint64_t> newest_stateful_set_write_{0};
  std::atomic<bool> unordered_stateful_set_write_{false};
};

// A KubeClient for the writes of one reconcile, of the ShardSet `writer` ("namespace/name"): it
// forwards every call to `inner` and records each successful create, update, patch and delete
// in `expectations` as that ShardSet's. One per reconcile, so that writes the PlanApplier sends
// from threads of its own are attributed too. Reads and watches are only forwarded.
class RecordingClient final : public k8s::KubeClient {
 public:
  // inner and expectations must outlive this client.
  RecordingClient(k8s::KubeClient& inner, Expectations& expectations, std::string writer)
      : inner_(inner), expectations_(expectations), writer_(std::move(writer)) {}

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
  Expectations& expectations_;
  const std::string writer_;
};

}  // namespace shardscaler::controller
