// A thread-safe in-memory cache of Kubernetes objects keyed by "namespace/name" ("name" for
// cluster-scoped objects), filled by an Informer. It never talks to a server.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "shardscaler/k8s_client/kube_client.h"

namespace shardscaler::k8s {

// Objects are shared, immutable snapshots: readers keep one as long as they like without
// copying the JSON, and a later update replaces the pointer, never the object.
using ObjectPtr = std::shared_ptr<const Json>;

// "namespace/name", or "name" when the object has no namespace.
std::string objectKey(std::string_view ns, std::string_view name);
std::string objectKey(const Json& object);
// metadata.resourceVersion, "" when absent.
std::string resourceVersionOf(const Json& object);

// An index function: the values under which an object is found in one index (none, one or
// several), e.g. the target "namespace/Kind/name" a ShardSet names. As client-go's cache.Indexer.
using IndexFunc = std::function<std::vector<std::string>(const Json&)>;
using Indexers = std::map<std::string, IndexFunc, std::less<>>;

// What Store::replace changed, in the order handlers should hear about it.
struct StoreDiff {
  std::vector<ObjectPtr> added;
  std::vector<std::pair<ObjectPtr, ObjectPtr>> updated;  // {old, new}; only changed objects
  std::vector<ObjectPtr> deleted;                        // last known state, sorted by key
};

// Thread-safety: every method may be called from any thread; readers share a lock, writers
// are exclusive. Returned pointers stay valid after the store changes.
class Store {
 public:
  explicit Store(Indexers indexers = {});

  ObjectPtr get(std::string_view key) const;  // nullptr when absent
  ObjectPtr get(std::string_view ns, std::string_view name) const;
  std::vector<ObjectPtr> list() const;
  std::vector<ObjectPtr> listNamespace(std::string_view ns) const;
  std::vector<std::string> keys() const;
  std::size_t size() const;
  // The objects filed under `value` in index `index`, in key order; empty for an index that
  // does not exist. Costs what it returns, not the size of the store.
  std::vector<ObjectPtr> byIndex(std::string_view index, std::string_view value) const;

  // Writers (the informer's): each returns the object it replaced or removed, or nullptr.
  ObjectPtr upsert(ObjectPtr object);
  ObjectPtr erase(const std::string& key);
  // Makes the store hold exactly `objects`; an object counts as updated when its
  // resourceVersion (or, lacking one, its content) differs from the stored one.
  StoreDiff replace(std::vector<ObjectPtr> objects);

 private:
  struct Index {
    IndexFunc function;
    std::unordered_map<std::string, std::set<std::string, std::less<>>> keys;  // value -> keys
  };
  // Callers hold mutex_ exclusively.
  void indexLocked(const std::string& key, const Json& object);
  void unindexLocked(const std::string& key, const Json& object);

  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string, ObjectPtr> objects_;
  std::map<std::string, Index, std::less<>> indexes_;
};

}  // namespace shardscaler::k8s
