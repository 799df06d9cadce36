#include "shardscaler/controller/expectations.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "shardscaler/k8s_client/store.h"

#include "object_fields.h"

namespace shardscaler::controller {
namespace {

std::string recordKey(const k8s::Resource& resource, const k8s::Json& object) {
  std::string key = resource.resource;
  key.append(".").append(resource.group).append("/").append(k8s::objectKey(object));
  return key;
}

}  // namespace

void Expectations::recordWrite(const k8s::Resource& resource, const k8s::Json& answer,
                               const std::string& writer) {
  std::string version = k8s::resourceVersionOf(answer);
  if (version.empty()) return;  // not an object (e.g. a Status): nothing can echo it
  if (resource == k8s::resources::statefulSets()) noteStatefulSetWrite(version);
  std::lock_guard lock(mutex_);
  auto& writes = writes_[recordKey(resource, answer)];
  writes.push_back({std::move(version), writer});
  // An echo older than the newest kPerObject writes was missed (a relist skipped it): dropping
  // its record only means its echo, should it come, queues the ShardSet as any event does.
  while (writes.size() > kPerObject) writes.pop_front();
}

std::optional<std::string> Expectations::echoWriter(const k8s::Resource& resource,
                                                    const k8s::Json& old_object,
                                                    const k8s::Json& new_object) {
  const std::string version = k8s::resourceVersionOf(new_object);
  // A resync hands the cached object over twice: a nudge, never an echo.
  if (version.empty() || version == k8s::resourceVersionOf(old_object)) return std::nullopt;
  std::lock_guard lock(mutex_);
  auto it = writes_.find(recordKey(resource, new_object));
  if (it == writes_.end()) return std::nullopt;
  auto& writes = it->second;
  auto match = std::ranges::find(writes, version, &Write::resource_version);
  if (match == writes.end()) return std::nullopt;
  std::string writer = std::move(match->writer);
  // Events of one object arrive in version order: the writes before this one have had their
  // echoes (or will never get them).
  writes.erase(writes.begin(), match + 1);
  if (writes.empty()) writes_.erase(it);
  return writer;
}

void Expectations::forgetObject(const k8s::Resource& resource, const k8s::Json& object) {
  std::lock_guard lock(mutex_);
  writes_.erase(recordKey(resource, object));
}

std::size_t Expectations::pendingEchoes() const {
  std::lock_guard lock(mutex_);
  return writes_.size();
}

void Expectations::noteStatefulSetWrite(const std::string& resource_version) {
  // NotOlderThan (which the server compares) is all the value is used for.
  const std::uint64_t value = revisionOf(resource_version);
  if (value == 0) {
    if (!resource_version.empty()) unordered_stateful_set_write_ = true;
    return;
  }
  std::uint64_t seen = newest_stateful_set_write_.load();
  while (value > seen && !newest_stateful_set_write_.compare_exchange_weak(seen, value)) {
  }
}

std::optional<std::uint64_t> Expectations::newestStatefulSetWrite() const {
  if (unordered_stateful_set_write_.load()) return std::nullopt;
  return newest_stateful_set_write_.load();
}

bool Expectations::CacheFloor::shownBy(std::string_view target_version,
                                       std::string_view shards_version) const {
  return notOlderThan(target_version, this->target_version) &&
         notOlderThan(shards_version, this->shards_version);
}

void Expectations::expectCaches(const std::string& key, CacheFloor floor) {
  std::lock_guard lock(mutex_);
  floors_[key] = floor;
}

void Expectations::expectLiveRead(const std::string& key) {
  std::lock_guard lock(mutex_);
  floors_[key] = std::nullopt;
}

std::optional<Expectations::CacheFloor> Expectations::cacheFloor(const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto it = floors_.find(key);
  if (it == floors_.end()) return CacheFloor{};
  return it->second;
}

void Expectations::forgetShardSet(const std::string& key) {
  std::lock_guard lock(mutex_);
  floors_.erase(key);
}

k8s::Result<k8s::Json> RecordingClient::recorded(const k8s::Resource& r,
                                                 k8s::Result<k8s::Json> answer) {
  if (answer && answer->is_object()) expectations_.recordWrite(r, *answer, writer_);
  return answer;
}

k8s::Result<k8s::Json> RecordingClient::get(const k8s::Resource& r, const std::string& ns,
                                            const std::string& name,
                                            const std::string& subresource) {
  return inner_.get(r, ns, name, subresource);
}

k8s::Result<k8s::Json> RecordingClient::list(const k8s::Resource& r, const std::string& ns,
                                             const k8s::ListOptions& opts) {
  return inner_.list(r, ns, opts);
}

k8s::Result<k8s::Json> RecordingClient::create(const k8s::Resource& r, const std::string& ns,
                                               const k8s::Json& obj) {
  return recorded(r, inner_.create(r, ns, obj));
}

k8s::Result<k8s::Json> RecordingClient::update(const k8s::Resource& r, const std::string& ns,
                                               const k8s::Json& obj,
                                               const std::string& subresource) {
  return recorded(r, inner_.update(r, ns, obj, subresource));
}

k8s::Result<k8s::Json> RecordingClient::patch(const k8s::Resource& r, const std::string& ns,
                                              const std::string& name, k8s::PatchType type,
                                              const k8s::Json& patch,
                                              const std::string& subresource) {
  return recorded(r, inner_.patch(r, ns, name, type, patch, subresource));
}

k8s::Result<k8s::Json> RecordingClient::patchReading(const k8s::Resource& r, const std::string& ns,
                                                     const std::string& name, k8s::PatchType type,
                                                     const k8s::Json& patch,
                                                     const std::string& subresource,
                                                     const k8s::AnswerFields& read) {
  return recorded(r, inner_.patchReading(r, ns, name, type, patch, subresource, read));
}

k8s::Result<k8s::Json> RecordingClient::remove(const k8s::Resource& r, const std::string& ns,
                                               const std::string& name,
                                               const k8s::DeleteOptions& opts) {
  // A foreground delete answers with the object, deletionTimestamp set: that version is ours.
  return recorded(r, inner_.remove(r, ns, name, opts));
}

k8s::Result<void> RecordingClient::watch(const k8s::Resource& r, const std::string& ns,
                                         const k8s::WatchOptions& opts,
                                         const k8s::WatchHandler& handler,
                                         const std::atomic<bool>* stop) {
  return inner_.watch(r, ns, opts, handler, stop);
}

}  // namespace shardscaler::controller
