// An in-memory KubeClient for unit tests (library k8s_testing): objects with the API server's
// metadata bookkeeping, preconditions, finalizers, watches the informers can run on, fault
// injection and a record of every call. Test code only: it must never be linked into a product.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/kube_client.h"

namespace shardscaler::k8s::testing {

enum class Verb { Get, List, Create, Update, Patch, Remove, Watch };
std::string_view toString(Verb verb);

// One call as the client received it, before any fault or precondition was applied.
struct Call {
  Verb verb = Verb::Get;
  Resource resource;
  std::string ns;
  std::string name;
  std::string subresource;
  Json body;  // create/update: the object; patch: the patch; otherwise null
  std::optional<PatchType> patch_type;
  DeleteOptions delete_options;
  std::string label_selector;  // list and watch
  ListOptions list_options;    // list: as asked for
  WatchOptions watch_options;  // watch: as asked for
  std::optional<Error> error;  // what the call answered, when it failed
};

// Which calls a fault applies to; an empty field matches anything.
struct CallMatch {
  std::optional<Verb> verb;
  std::string resource;  // the plural, e.g. "statefulsets"
  std::string name;
  std::optional<std::string> subresource;  // "" = the main resource only
  bool matches(const Call& call) const;
};

// An Error exactly as RestClient builds it from a metav1.Status answer with this code, reason and
// message (reason "" = the one the API server uses for the code).
Error statusError(int http_status, std::string message, std::string reason = {},
                  std::optional<std::chrono::seconds> retry_after = std::nullopt);

// Thread-safety: every method may be called from any thread.
class FakeKubeClient final : public KubeClient {
 public:
  // creationTimestamp and deletionTimestamp come from `clock` (nullptr: a fixed time).
  explicit FakeKubeClient(const Clock* clock = nullptr);
  ~FakeKubeClient() override;

  // ---- test side ------------------------------------------------------------------------------
  // Creates or replaces `object` without preconditions, filling in what create would (uid,
  // resourceVersion, generation, creationTimestamp) where missing; watchers see it. Returns it.
  Json put(const Resource& r, Json object);
  std::optional<Json> find(const Resource& r, const std::string& ns, const std::string& name) const;
  // Removes at once, finalizers or not (as if the garbage collector were done); watchers see it.
  void erase(const Resource& r, const std::string& ns, const std::string& name);
  // The next `times` calls that match answer `error` instead (faults queue in order of adding).
  void failNext(CallMatch match, int times, Error error);
  // failNext's `times` for a fault that lasts as long as the test.
  static constexpr int kEveryCall = std::numeric_limits<int>::max();
  // Runs before each call is served (no lock held), e.g. to change an object under the caller.
  void setBeforeCall(std::function<void(const Call&)> hook);
  std::vector<Call> calls() const;
  std::vector<Call> calls(const CallMatch& match) const;
  // The calls among those that match that wrote (create, update, patch) and succeeded: what the
  // code under test changed. put() and erase() are the test's own and are not calls.
  std::vector<Call> writes(const CallMatch& match = {}) const;
  void clearCalls();
  std::string currentResourceVersion() const;
  // From now on resourceVersions are written "rv-<n>": opaque to clients, as the API conventions
  // allow, for code that must not order them. Call before the first put().
  void useOpaqueResourceVersions();
  // Compacts the history: a watch from a resourceVersion older than the current one is answered
  // 410 Gone (reason Expired), as the API server does once etcd has compacted it away.
  void compact();
  // A BOOKMARK at the current resourceVersion for the watches of `r` that allow bookmarks: the
  // API server's way of moving a quiet watch's resume point on.
  void bookmark(const Resource& r);
  // Ends the watches open now: with `error` (e.g. a reset connection or 410 Gone) or, with
  // nullopt, normally (the server's watch timeout). Unlike stopWatches(), new watches work.
  void endWatches(std::optional<Error> error);
  // The watches of `r` lag: a change of `r` made from now on reaches none of them (open or opened
  // later from a resourceVersion) until releaseWatches(r), as an informer trails the API server on
  // a slow stream while the informers of other resources keep up. Gets and lists see it at once.
  // awaitWatchesDelivered counts a held watch as delivered once it handed out what came before.
  void holdWatches(const Resource& r);
  void releaseWatches(const Resource& r);
  // Ends every watch and makes new ones return at once (before the informers are stopped, so that
  // they do not wait for a watch to notice).
  void stopWatches();
  // Waits (real time, bounded) until at least `open` watches are open and every open watch has
  // handed out every change made so far: then each informer's cache (one watch each) holds the
  // objects as they are now.
  bool awaitWatchesDelivered(std::size_t open = 1,
                             std::chrono::milliseconds timeout = std::chrono::seconds(5)) const;

  // ---- KubeClient -----------------------------------------------------------------------------
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
  Result<Json> remove(const Resource& r, const std::string& ns, const std::string& name,
                      const DeleteOptions& opts = {}) override;
  Result<void> watch(const Resource& r, const std::string& ns, const WatchOptions& opts,
                     const WatchHandler& handler, const std::atomic<bool>* stop = nullptr) override;

 private:
  using Key = std::tuple<std::string, std::string, std::string>;  // resource, namespace, name
  struct Entry {
    std::string resource;
    WatchEventType type;
    std::int64_t rv;
    Json object;
  };
  struct Fault {
    CallMatch match;
    int remaining;
    Error error;
  };

  static Key keyOf(const Resource& r, const std::string& ns, const std::string& name);
  // Records the call (its number in *seq) and returns the injected fault for it, if any.
  std::optional<Error> begin(Call call, std::size_t* seq);
  // Notes the failure in the call record and returns it.
  std::unexpected<Error> failed(std::size_t seq, Error error);
  void noteFailureLocked(std::size_t seq, const Error& error);
  std::string nowText() const;
  // Stores `object` as the new state of `key` (bumping resourceVersion, and generation when
  // `bump_generation`), or deletes it when it is being deleted and has no finalizer left.
  Json commitLocked(const Resource& r, const Key& key, Json object, bool bump_generation);
  void recordLocked(const Resource& r, WatchEventType type, const Json& object);
  // The write of `next` over the stored `current` through `subresource`, as the API server does
  // it: the preconditions it carries, the fields that subresource may change, and the commit.
  Result<Json> writeLocked(const Resource& r, const Key& key, const Json& current, Json next,
                           const std::string& subresource);

  const Clock* clock_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::int64_t rv_ = 1000;
  bool opaque_versions_ = false;
  std::string versionText(std::int64_t rv) const;  // as written in metadata.resourceVersion
  std::int64_t uids_ = 0;
  std::map<Key, Json> objects_;
  std::vector<Entry> history_;
  std::deque<Fault> faults_;
  std::vector<Call> calls_;
  std::size_t calls_cleared_ = 0;  // calls before calls_[0]
  std::function<void(const Call&)> before_call_;
  bool watches_stopped_ = false;
  std::int64_t compacted_ = 0;  // watches from before this resourceVersion are Gone
  // endWatches(): each call ends the watches opened before it, with this answer.
  std::uint64_t watch_ends_ = 0;
  std::optional<Error> watch_end_error_;
  // holdWatches(): by resource (describe()), the resourceVersion after which its changes are held;
  // and the open watches held back now (by watch, its resource), delivered as far as they may be.
  std::map<std::string, std::int64_t> held_after_;
  std::map<std::uint64_t, std::string> held_watches_;
  // Open watches: how far into history_ each has handed out (or skipped) events.
  std::map<std::uint64_t, std::size_t> watch_positions_;
  std::uint64_t next_watch_ = 0;
};

}  // namespace shardscaler::k8s::testing
