// Test doubles for the informer, reflector and leader-elector tests: an in-memory API server
// with resourceVersion semantics (history, compaction, conflicts) behind KubeClient.
// Unit tests only; it never opens a socket and never waits on real time except to poll stop.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/k8s_client/store.h"

namespace shardscaler::k8s::cachetest {

inline Error apiError(ErrorKind kind, int status, std::string message = "injected") {
  return Error{.kind = kind,
               .http_status = status,
               .reason = {},
               .message = std::move(message),
               .retry_after = {}};
}

enum class Verb { Get, List, Create, Update, Remove, Watch };

// Objects live per resource, keyed by namespace/name. Every write bumps one global
// resourceVersion and appends to a history that watches replay from their start version.
class InMemoryApiServer final : public KubeClient {
 public:
  // ---- test side -------------------------------------------------------------------------
  // Creates or replaces without preconditions; returns the stored object.
  Json put(const Resource& r, Json object) {
    std::lock_guard lock(mutex_);
    auto key = storeKey(r, object);
    bool existed = objects_.contains(key);
    stamp(object);
    objects_[key] = object;
    record(r, existed ? WatchEventType::Modified : WatchEventType::Added, object);
    return object;
  }
  void erase(const Resource& r, const std::string& ns, const std::string& name) {
    std::lock_guard lock(mutex_);
    auto it = objects_.find(storeKey(r, ns, name));
    if (it == objects_.end()) return;
    Json object = it->second;
    objects_.erase(it);
    object["metadata"]["resourceVersion"] = std::to_string(++rv_);
    record(r, WatchEventType::Deleted, object);
  }
  // A write to something nobody watches: moves the resourceVersion on.
  void bumpResourceVersion() {
    std::lock_guard lock(mutex_);
    ++rv_;
  }
  void bookmark(const Resource& r) {
    std::lock_guard lock(mutex_);
    Json object{{"kind", "Bookmark"}, {"metadata", {{"resourceVersion", std::to_string(rv_)}}}};
    history_.push_back(Entry{r.describe(), WatchEventType::Bookmark, rv_, std::move(object)});
    cv_.notify_all();
  }
  // Watches starting before the current version get 410 Gone from now on.
  void compact() {
    std::lock_guard lock(mutex_);
    compacted_ = rv_;
  }
  // Ends every open watch: with `error`, or normally (server-side timeout) when nullopt.
  void endWatches(std::optional<Error> error) {
    std::lock_guard lock(mutex_);
    end_result_ = std::move(error);
    ++end_generation_;
    cv_.notify_all();
  }
  // The next call of `verb` fails with `error` (a queue per verb).
  void failNext(Verb verb, Error error) {
    std::lock_guard lock(mutex_);
    failures_[verb].push_back(std::move(error));
  }
  // Every call of `verb` fails with `error` until cleared with nullopt.
  void failAlways(Verb verb, std::optional<Error> error) {
    std::lock_guard lock(mutex_);
    if (error) {
      always_[verb] = *error;
    } else {
      always_.erase(verb);
    }
  }
  std::optional<Json> object(const Resource& r, const std::string& ns, const std::string& name) {
    std::lock_guard lock(mutex_);
    auto it = objects_.find(storeKey(r, ns, name));
    if (it == objects_.end()) return std::nullopt;
    return it->second;
  }
  std::string currentResourceVersion() const {
    std::lock_guard lock(mutex_);
    return std::to_string(rv_);
  }
  std::vector<WatchOptions> watchCalls() const {
    std::lock_guard lock(mutex_);
    return watch_calls_;
  }
  std::vector<ListOptions> listCalls() const {
    std::lock_guard lock(mutex_);
    return list_calls_;
  }
  int calls(Verb verb) const {
    std::lock_guard lock(mutex_);
    auto it = call_counts_.find(verb);
    return it == call_counts_.end() ? 0 : it->second;
  }
  // Waits (bounded, real time) until the n-th watch call is streaming.
  bool awaitOpenWatch(std::size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return watch_calls_.size() >= n && open_ > 0; });
  }
  bool awaitListCalls(std::size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return list_calls_.size() >= n; });
  }

  // ---- KubeClient -------------------------------------------------------------------------
  Result<Json> get(const Resource& r, const std::string& ns, const std::string& name,
                   const std::string& /*subresource*/ = {}) override {
    std::lock_guard lock(mutex_);
    if (auto e = failure(Verb::Get)) return std::unexpected(*e);
    auto it = objects_.find(storeKey(r, ns, name));
    if (it == objects_.end()) return std::unexpected(apiError(ErrorKind::NotFound, 404, name));
    return it->second;
  }

  Result<Json> list(const Resource& r, const std::string& ns,
                    const ListOptions& opts = {}) override {
    std::lock_guard lock(mutex_);
    list_calls_.push_back(opts);
    cv_.notify_all();
    if (auto e = failure(Verb::List)) return std::unexpected(*e);
    std::vector<const Json*> matching;
    for (const auto& [key, object] : objects_) {
      if (key.rfind(r.describe() + "|", 0) != 0) continue;
      if (!ns.empty() && object["metadata"].value("namespace", "") != ns) continue;
      if (!labelsMatch(object, opts.label_selector)) continue;
      matching.push_back(&object);
    }
    std::size_t offset = opts.continue_token.empty() ? 0 : std::stoul(opts.continue_token);
    std::size_t end = matching.size();
    if (opts.limit && offset + static_cast<std::size_t>(*opts.limit) < end) {
      end = offset + static_cast<std::size_t>(*opts.limit);
    }
    Json items = Json::array();
    for (std::size_t i = offset; i < end; ++i) {
      items.push_back(served(*matching[i], opts.metadata_only, opts.fields.get()));
    }
    Json metadata{{"resourceVersion", std::to_string(rv_)}};
    if (end < matching.size()) metadata["continue"] = std::to_string(end);
    return Json{{"kind", "List"}, {"metadata", metadata}, {"items", items}};
  }

  Result<Json> create(const Resource& r, const std::string& /*ns*/, const Json& obj) override {
    std::lock_guard lock(mutex_);
    if (auto e = failure(Verb::Create)) return std::unexpected(*e);
    auto key = storeKey(r, obj);
    if (objects_.contains(key)) {
      return std::unexpected(apiError(ErrorKind::AlreadyExists, 409, "already exists"));
    }
    Json object = obj;
    stamp(object);
    objects_[key] = object;
    record(r, WatchEventType::Added, object);
    return object;
  }

  Result<Json> update(const Resource& r, const std::string& /*ns*/, const Json& obj,
                      const std::string& /*subresource*/ = {}) override {
    std::lock_guard lock(mutex_);
    if (auto e = failure(Verb::Update)) return std::unexpected(*e);
    auto it = objects_.find(storeKey(r, obj));
    if (it == objects_.end()) return std::unexpected(apiError(ErrorKind::NotFound, 404, "gone"));
    auto precondition = resourceVersionOf(obj);
    if (!precondition.empty() && precondition != resourceVersionOf(it->second)) {
      return std::unexpected(apiError(ErrorKind::Conflict, 409, "object has been modified"));
    }
    Json object = obj;
    stamp(object);
    it->second = object;
    record(r, WatchEventType::Modified, object);
    return object;
  }

  Result<Json> patch(const Resource&, const std::string&, const std::string&, PatchType,
                     const Json&, const std::string& = {}) override {
    return std::unexpected(apiError(ErrorKind::BadRequest, 400, "patch not faked"));
  }

  Result<Json> remove(const Resource& r, const std::string& ns, const std::string& name,
                      const DeleteOptions& /*opts*/ = {}) override {
    {
      std::lock_guard lock(mutex_);
      if (auto e = failure(Verb::Remove)) return std::unexpected(*e);
      if (!objects_.contains(storeKey(r, ns, name))) {
        return std::unexpected(apiError(ErrorKind::NotFound, 404, name));
      }
    }
    erase(r, ns, name);
    return Json{{"kind", "Status"}, {"status", "Success"}};
  }

  Result<void> watch(const Resource& r, const std::string& ns, const WatchOptions& opts,
                     const WatchHandler& handler, const std::atomic<bool>* stop) override {
    std::unique_lock lock(mutex_);
    watch_calls_.push_back(opts);
    cv_.notify_all();
    if (auto e = failure(Verb::Watch)) return std::unexpected(*e);
    std::int64_t from = opts.resource_version.empty() ? rv_ : std::stoll(opts.resource_version);
    if (from < compacted_) return std::unexpected(apiError(ErrorKind::Gone, 410, "too old"));
    std::size_t pos = 0;
    while (pos < history_.size() && history_[pos].rv <= from) ++pos;
    auto generation = end_generation_;
    ++open_;
    cv_.notify_all();
    struct Close {
      InMemoryApiServer* server;
      ~Close() { --server->open_; }
    } close{this};
    while (true) {
      while (pos < history_.size() && end_generation_ == generation) {
        const auto& entry = history_[pos++];
        if (entry.resource != r.describe()) continue;
        if (entry.type == WatchEventType::Bookmark) {
          if (!opts.allow_bookmarks) continue;
        } else {
          if (!ns.empty() && entry.object["metadata"].value("namespace", "") != ns) continue;
          if (!labelsMatch(entry.object, opts.label_selector)) continue;
        }
        WatchEvent event{entry.type,
                         entry.type == WatchEventType::Bookmark
                             ? entry.object
                             : served(entry.object, opts.metadata_only, opts.fields.get())};
        lock.unlock();
        bool more = handler(std::move(event));
        lock.lock();
        if (!more) return {};
      }
      if (stop && stop->load()) return {};
      if (end_generation_ != generation) {
        if (end_result_) return std::unexpected(*end_result_);
        return {};
      }
      // Polls the stop flag the way the real client does between reads.
      cv_.wait_for(lock, std::chrono::milliseconds(1));
    }
  }

 private:
  // What a real server and RestClient would hand back: PartialObjectMetadata when asked for
  // metadata only, then only the fields asked for.
  static Json served(const Json& object, bool metadata_only, const FieldMask* fields) {
    Json out = object;
    if (metadata_only) {
      out = Json{{"kind", "PartialObjectMetadata"},
                 {"apiVersion", "meta.k8s.io/v1"},
                 {"metadata", object.value("metadata", Json::object())}};
    }
    if (fields != nullptr) fields->apply(out);
    return out;
  }

  struct Entry {
    std::string resource;
    WatchEventType type;
    std::int64_t rv;
    Json object;
  };

  static std::string storeKey(const Resource& r, const std::string& ns, const std::string& name) {
    return r.describe() + "|" + objectKey(ns, name);
  }
  static std::string storeKey(const Resource& r, const Json& object) {
    return r.describe() + "|" + objectKey(object);
  }
  // "a=b,c=d" equality selectors only.
  static bool labelsMatch(const Json& object, const std::string& selector) {
    if (selector.empty()) return true;
    const Json labels = object["metadata"].value("labels", Json::object());
    std::size_t start = 0;
    while (start <= selector.size()) {
      auto comma = selector.find(',', start);
      auto term =
          selector.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      auto eq = term.find('=');
      auto key = term.substr(0, eq);
      auto value = term.substr(eq + 1);
      if (!labels.contains(key) || labels[key] != value) return false;
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return true;
  }
  void stamp(Json& object) {
    auto& meta = object["metadata"];
    meta["resourceVersion"] = std::to_string(++rv_);
    if (!meta.contains("uid")) meta["uid"] = "uid-" + std::to_string(rv_);
  }
  void record(const Resource& r, WatchEventType type, const Json& object) {
    history_.push_back(Entry{r.describe(), type, rv_, object});
    cv_.notify_all();
  }
  std::optional<Error> failure(Verb verb) {
    ++call_counts_[verb];
    if (auto it = always_.find(verb); it != always_.end()) return it->second;
    auto& queue = failures_[verb];
    if (queue.empty()) return std::nullopt;
    auto e = queue.front();
    queue.pop_front();
    return e;
  }

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::int64_t rv_ = 100;
  std::int64_t compacted_ = 0;
  std::map<std::string, Json> objects_;
  std::vector<Entry> history_;
  std::vector<WatchOptions> watch_calls_;
  std::vector<ListOptions> list_calls_;
  std::map<Verb, int> call_counts_;
  std::map<Verb, std::deque<Error>> failures_;
  std::map<Verb, Error> always_;
  std::optional<Error> end_result_;
  std::uint64_t end_generation_ = 0;
  int open_ = 0;
};

// A thread-safe log of strings that tests wait on (bounded, real time).
class EventLog {
 public:
  void push(std::string entry) {
    {
      std::lock_guard lock(mutex_);
      entries_.push_back(std::move(entry));
    }
    cv_.notify_all();
  }
  bool awaitSize(std::size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return entries_.size() >= n; });
  }
  std::vector<std::string> entries() const {
    std::lock_guard lock(mutex_);
    return entries_;
  }
  void clear() {
    std::lock_guard lock(mutex_);
    entries_.clear();
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::string> entries_;
};

inline Json makeObject(const std::string& ns, const std::string& name, Json labels = nullptr,
                       Json spec = Json::object()) {
  Json object{{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata", {{"namespace", ns}, {"name", name}}},
              {"spec", std::move(spec)}};
  if (!labels.is_null()) object["metadata"]["labels"] = std::move(labels);
  return object;
}

}  // namespace shardscaler::k8s::cachetest
