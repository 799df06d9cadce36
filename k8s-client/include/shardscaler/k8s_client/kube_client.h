// The Kubernetes REST verbs for any group/version/resource, as an interface so that a unit
// test can hand in a fake. Objects are JSON; nothing here knows what a Prometheus is.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "shardscaler/k8s_client/error.h"
#include "shardscaler/k8s_client/field_mask.h"
#include "shardscaler/k8s_meta/resource.h"

namespace shardscaler::k8s {

using Json = nlohmann::json;

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  std::optional<int64_t> limit;  // page size; the result's metadata.continue has the next token
  std::string continue_token;
  std::string resource_version;        // "" = most recent (quorum read)
  std::string resource_version_match;  // "", "NotOlderThan", "Exact"
  // Ask for metadata only: items are meta.k8s.io/v1 PartialObjectMetadata (kind, apiVersion,
  // metadata), as client-go's metadata client does. A server that cannot answer so sends whole
  // objects, which `fields` (or the caller) must then trim.
  bool metadata_only = false;
  // Decode only these fields of each item, without building the rest (nullptr: everything).
  // A KubeClient may return more than asked (a test double may ignore it); never less.
  std::shared_ptr<const FieldMask> fields;
};

struct WatchOptions {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;  // start after this version
  bool allow_bookmarks = true;
  int timeout_seconds = 300;  // server-side watch timeout; the server then ends the stream
  // Dead-connection detection: a stream that delivers no byte for this long fails with
  // Timeout. 0 = timeout_seconds + 30 (the server must have ended the watch by then).
  int idle_timeout_seconds = 0;
  // As in ListOptions, for the objects of ADDED, MODIFIED and DELETED events.
  bool metadata_only = false;
  std::shared_ptr<const FieldMask> fields;
};

struct DeleteOptions {
  std::optional<std::string> propagation_policy;  // "Foreground", "Background", "Orphan"
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
  std::optional<int64_t> grace_period_seconds;
};

// What the caller of a write reads of the object the server answers with, as ListOptions'
// metadata_only and fields do for a list: a controller that only records the new
// resourceVersion asks for PartialObjectMetadata (client-go's metadata client does) and decodes
// a few fields of it, not a whole StatefulSet with its pod template.
struct AnswerFields {
  bool metadata_only = false;
  std::shared_ptr<const FieldMask> fields;  // nullptr: all of what the server sent
};

enum class PatchType {
  Merge,           // application/merge-patch+json
  Json,            // application/json-patch+json
  StrategicMerge,  // application/strategic-merge-patch+json (built-in types only)
};

enum class WatchEventType { Added, Modified, Deleted, Bookmark, Error };

struct WatchEvent {
  WatchEventType type;
  // The object; for Bookmark only kind, apiVersion and metadata.resourceVersion are
  // meaningful; for Error the metav1.Status (RestClient turns that into watch()'s Error).
  Json object;
};

// Returns false to stop the watch.
using WatchHandler = std::function<bool(WatchEvent&&)>;

class KubeClient {
 public:
  virtual ~KubeClient() = default;

  // ns is ignored for cluster-scoped resources; "" on list/watch means all namespaces.
  virtual Result<Json> get(const Resource& r, const std::string& ns, const std::string& name,
                           const std::string& subresource = {}) = 0;
  // One page; callers loop on metadata.continue (see listAll).
  virtual Result<Json> list(const Resource& r, const std::string& ns,
                            const ListOptions& opts = {}) = 0;
  virtual Result<Json> create(const Resource& r, const std::string& ns, const Json& obj) = 0;
  // PUT; metadata.resourceVersion in obj is the optimistic-concurrency precondition.
  virtual Result<Json> update(const Resource& r, const std::string& ns, const Json& obj,
                              const std::string& subresource = {}) = 0;
  virtual Result<Json> patch(const Resource& r, const std::string& ns, const std::string& name,
                             PatchType type, const Json& patch,
                             const std::string& subresource = {}) = 0;
  // patch(), its answer read only as far as `read` says. A client may return more than asked
  // (this default returns patch()'s answer trimmed by read.fields); never less.
  virtual Result<Json> patchReading(const Resource& r, const std::string& ns,
                                    const std::string& name, PatchType type, const Json& patch,
                                    const std::string& subresource, const AnswerFields& read);
  // Returns the deleted object, or the Status the server sent for an accepted delete.
  virtual Result<Json> remove(const Resource& r, const std::string& ns, const std::string& name,
                              const DeleteOptions& opts = {}) = 0;
  // Streams events to handler until the server ends the watch (returns ok), the handler
  // returns false, *stop becomes true (ok, within about a second), or an error. A 410 arrives
  // as Error kind Gone, whether the server sent it as an HTTP status or as an ERROR event;
  // ERROR events end the watch with their Status decoded and are not passed to the handler.
  // Resuming (from the last event's metadata.resourceVersion) is the caller's job.
  virtual Result<void> watch(const Resource& r, const std::string& ns, const WatchOptions& opts,
                             const WatchHandler& handler,
                             const std::atomic<bool>* stop = nullptr) = 0;
};

// Lists every page; the returned object holds all items and the last page's metadata
// (whose resourceVersion is the one to watch from). If a continue token expires (410) the
// list starts over once without paging, as client-go's pager does.
Result<Json> listAll(KubeClient& client, const Resource& r, const std::string& ns,
                     ListOptions opts = {});

}  // namespace shardscaler::k8s
