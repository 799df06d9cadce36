#include "shardscaler/k8s_testing/fake_kube_client.h"

#include <algorithm>
#include <charconv>

#include "shardscaler/k8s_client/meta_time.h"

#include "fake_objects.h"

namespace shardscaler::k8s::testing {

using detail::Selection;

namespace {

const std::string& nameOf(const Json& object) {
  static const std::string kEmpty;
  const auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return kEmpty;
  const auto name = metadata->find("name");
  return name != metadata->end() && name->is_string() ? name->get_ref<const std::string&>()
                                                      : kEmpty;
}

std::string metaString(const Json& object, const char* field) {
  const Json& metadata = object.value("metadata", Json::object());
  const auto it = metadata.find(field);
  return it != metadata.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// What spec changes bump metadata.generation by: everything but metadata and status.
Json specPart(Json object) {
  object.erase("metadata");
  object.erase("status");
  return object;
}

bool hasFinalizers(const Json& object) {
  const Json& metadata = object.value("metadata", Json::object());
  const auto it = metadata.find("finalizers");
  return it != metadata.end() && it->is_array() && !it->empty();
}

}  // namespace

FakeKubeClient::FakeKubeClient(const Clock* clock) : clock_(clock) {}

FakeKubeClient::~FakeKubeClient() { stopWatches(); }

FakeKubeClient::Key FakeKubeClient::keyOf(const Resource& r, const std::string& ns,
                                          const std::string& name) {
  return {r.describe(), r.namespaced ? ns : std::string(), name};
}

std::string FakeKubeClient::nowText() const {
  using namespace std::chrono;
  return formatTime(clock_ != nullptr ? clock_->now()
                                      : Clock::SystemTime{sys_days{year{2026} / 1 / 1}});
}

// ---- test side ----------------------------------------------------------------------------------

Json FakeKubeClient::put(const Resource& r, Json object) {
  std::lock_guard lock(mutex_);
  Json& metadata = object["metadata"];
  const Key key = keyOf(r, metadata.value("namespace", ""), metadata.value("name", ""));
  if (!metadata.contains("uid")) metadata["uid"] = "fake-uid-" + std::to_string(++uids_);
  if (!metadata.contains("creationTimestamp")) metadata["creationTimestamp"] = nowText();
  if (!metadata.contains("generation")) metadata["generation"] = 1;
  return commitLocked(r, key, std::move(object), false);
}

std::optional<Json> FakeKubeClient::find(const Resource& r, const std::string& ns,
                                         const std::string& name) const {
  std::lock_guard lock(mutex_);
  const auto it = objects_.find(keyOf(r, ns, name));
  if (it == objects_.end()) return std::nullopt;
  return it->second;
}

void FakeKubeClient::erase(const Resource& r, const std::string& ns, const std::string& name) {
  std::lock_guard lock(mutex_);
  const auto it = objects_.find(keyOf(r, ns, name));
  if (it == objects_.end()) return;
  Json object = std::move(it->second);
  objects_.erase(it);
  object["metadata"]["resourceVersion"] = versionText(++rv_);
  recordLocked(r, WatchEventType::Deleted, object);
}

void FakeKubeClient::failNext(CallMatch match, int times, Error error) {
  std::lock_guard lock(mutex_);
  faults_.push_back(Fault{std::move(match), times, std::move(error)});
}

void FakeKubeClient::setBeforeCall(std::function<void(const Call&)> hook) {
  std::lock_guard lock(mutex_);
  before_call_ = std::move(hook);
}

std::vector<Call> FakeKubeClient::calls() const {
  std::lock_guard lock(mutex_);
  return calls_;
}

std::vector<Call> FakeKubeClient::calls(const CallMatch& match) const {
  std::lock_guard lock(mutex_);
  std::vector<Call> out;
  std::ranges::copy_if(calls_, std::back_inserter(out),
                       [&](const Call& c) { return match.matches(c); });
  return out;
}

std::vector<Call> FakeKubeClient::writes(const CallMatch& match) const {
  std::lock_guard lock(mutex_);
  std::vector<Call> out;
  std::ranges::copy_if(calls_, std::back_inserter(out), [&](const Call& c) {
    const bool write = c.verb == Verb::Create || c.verb == Verb::Update || c.verb == Verb::Patch;
    return write && !c.error && match.matches(c);
  });
  return out;
}

void FakeKubeClient::clearCalls() {
  std::lock_guard lock(mutex_);
  calls_cleared_ += calls_.size();
  calls_.clear();
}

std::string FakeKubeClient::currentResourceVersion() const {
  std::lock_guard lock(mutex_);
  return versionText(rv_);
}

void FakeKubeClient::useOpaqueResourceVersions() {
  std::lock_guard lock(mutex_);
  opaque_versions_ = true;
}

std::string FakeKubeClient::versionText(std::int64_t rv) const {
  return opaque_versions_ ? "rv-" + std::to_string(rv) : std::to_string(rv);
}

void FakeKubeClient::stopWatches() {
  std::lock_guard lock(mutex_);
  watches_stopped_ = true;
  changed_.notify_all();
}

bool FakeKubeClient::awaitWatchesDelivered(std::size_t open,
                                           std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] {
    return watch_positions_.size() >= open &&
           std::ranges::all_of(watch_positions_, [&](const auto& w) {
             return w.second == history_.size() || held_watches_.contains(w.first);
           });
  });
}

// ---- bookkeeping --------------------------------------------------------------------------------

std::optional<Error> FakeKubeClient::begin(Call call, std::size_t* seq) {
  std::function<void(const Call&)> hook;
  {
    std::lock_guard lock(mutex_);
    hook = before_call_;
  }
  if (hook) hook(call);
  std::lock_guard lock(mutex_);
  *seq = calls_cleared_ + calls_.size();
  calls_.push_back(std::move(call));
  for (auto it = faults_.begin(); it != faults_.end(); ++it) {
    if (!it->match.matches(calls_.back())) continue;
    Error error = it->error;
    if (--it->remaining <= 0) faults_.erase(it);
    calls_.back().error = error;
    return error;
  }
  return std::nullopt;
}

std::unexpected<Error> FakeKubeClient::failed(std::size_t seq, Error error) {
  std::lock_guard lock(mutex_);
  noteFailureLocked(seq, error);
  return std::unexpected(std::move(error));
}

void FakeKubeClient::noteFailureLocked(std::size_t seq, const Error& error) {
  if (seq >= calls_cleared_ && seq - calls_cleared_ < calls_.size()) {
    calls_[seq - calls_cleared_].error = error;
  }
}

void FakeKubeClient::recordLocked(const Resource& r, WatchEventType type, const Json& object) {
  history_.push_back(Entry{r.describe(), type, rv_, object});
  changed_.notify_all();
}

Json FakeKubeClient::commitLocked(const Resource& r, const Key& key, Json object,
                                  bool bump_generation) {
  Json& metadata = object["metadata"];
  metadata["resourceVersion"] = versionText(++rv_);
  if (bump_generation) metadata["generation"] = metadata.value("generation", 0) + 1;
  const auto it = objects_.find(key);
  if (metadata.contains("deletionTimestamp") && !hasFinalizers(object)) {
    // The last finalizer of an object being deleted is gone: so is the object.
    if (it != objects_.end()) objects_.erase(it);
    recordLocked(r, WatchEventType::Deleted, object);
    return object;
  }
  const bool existed = it != objects_.end();
  objects_[key] = object;
  recordLocked(r, existed ? WatchEventType::Modified : WatchEventType::Added, object);
  return object;
}

Result<Json> FakeKubeClient::writeLocked(const Resource& r, const Key& key, const Json& current,
                                         Json next, const std::string& subresource) {
  const std::string& name = std::get<2>(key);
  const std::string wanted_rv = metaString(next, "resourceVersion");
  if (!wanted_rv.empty() && wanted_rv != metaString(current, "resourceVersion")) {
    return std::unexpected(detail::modified(r, name));
  }
  const std::string uid = metaString(next, "uid");
  if (!uid.empty() && uid != metaString(current, "uid")) {
    return std::unexpected(
        detail::invalidField(current, r, name, "metadata.uid", Json(uid), "field is immutable"));
  }
  Json result;
  if (subresource == "status") {
    // The status subresource changes status only.
    result = current;
    if (next.contains("status")) {
      result["status"] = next["status"];
    } else {
      result.erase("status");
    }
  } else if (subresource.empty()) {
    // The main resource changes all but status and the fields the API server owns.
    result = std::move(next);
    Json& metadata = result["metadata"];
    for (const char* owned : {"uid", "creationTimestamp", "generation", "deletionTimestamp",
                              "deletionGracePeriodSeconds", "resourceVersion"}) {
      const Json& was = current["metadata"].value(owned, Json());
      if (was.is_null()) {
        metadata.erase(owned);
      } else {
        metadata[owned] = was;
      }
    }
    metadata["name"] = current["metadata"]["name"];
    if (current["metadata"].contains("namespace")) {
      metadata["namespace"] = current["metadata"]["namespace"];
    }
    if (current.contains("status")) {
      result["status"] = current["status"];
    } else {
      result.erase("status");
    }
  } else {
    return std::unexpected(statusError(
        404, "the fake serves no subresource \"" + subresource + "\" of " + r.describe()));
  }
  const bool spec_changed = subresource.empty() && specPart(result) != specPart(current);
  return commitLocked(r, key, std::move(result), spec_changed);
}

// ---- KubeClient ---------------------------------------------------------------------------------

Result<Json> FakeKubeClient::get(const Resource& r, const std::string& ns, const std::string& name,
                                 const std::string& subresource) {
  std::size_t seq = 0;
  if (auto e = begin(
          {.verb = Verb::Get, .resource = r, .ns = ns, .name = name, .subresource = subresource},
          &seq)) {
    return std::unexpected(*e);
  }
  if (!subresource.empty() && subresource != "status") {
    return failed(seq, statusError(404, "the fake serves no subresource \"" + subresource +
                                            "\" of " + r.describe()));
  }
  std::unique_lock lock(mutex_);
  const auto it = objects_.find(keyOf(r, ns, name));
  if (it == objects_.end()) {
    lock.unlock();
    return failed(seq, detail::notFound(r, name));
  }
  return it->second;
}

Result<Json> FakeKubeClient::list(const Resource& r, const std::string& ns,
                                  const ListOptions& opts) {
  std::size_t seq = 0;
  if (auto e = begin({.verb = Verb::List,
                      .resource = r,
                      .ns = ns,
                      .label_selector = opts.label_selector,
                      .list_options = opts},
                     &seq)) {
    return std::unexpected(*e);
  }
  auto selection =
      Selection::make(r.namespaced ? ns : "", opts.label_selector, opts.field_selector);
  if (!selection) return failed(seq, selection.error());
  std::size_t offset = 0;
  if (!opts.continue_token.empty()) {
    auto [p, ec] = std::from_chars(opts.continue_token.data(),
                                   opts.continue_token.data() + opts.continue_token.size(), offset);
    if (ec != std::errc()) return failed(seq, statusError(400, "invalid continue token"));
  }
  std::lock_guard lock(mutex_);
  const std::string resource = r.describe();
  Json items = Json::array();
  std::size_t matched = 0;
  bool more = false;
  for (const auto& [key, object] : objects_) {
    if (std::get<0>(key) != resource || !selection->matches(object)) continue;
    if (matched++ < offset) continue;
    if (opts.limit && static_cast<std::int64_t>(items.size()) >= *opts.limit) {
      more = true;
      break;
    }
    items.push_back(detail::served(object, opts.metadata_only, opts.fields.get()));
  }
  Json metadata{{"resourceVersion", versionText(rv_)}};
  if (more) metadata["continue"] = std::to_string(offset + items.size());
  return Json{{"kind", "List"}, {"apiVersion", "v1"}, {"metadata", metadata}, {"items", items}};
}

Result<Json> FakeKubeClient::create(const Resource& r, const std::string& ns, const Json& obj) {
  std::size_t seq = 0;
  if (auto e =
          begin({.verb = Verb::Create, .resource = r, .ns = ns, .name = nameOf(obj), .body = obj},
                &seq)) {
    return std::unexpected(*e);
  }
  Json object = obj;
  Json& metadata = object["metadata"];
  if (r.namespaced) {
    const std::string given = metadata.value("namespace", "");
    if (!given.empty() && given != ns) {
      return failed(seq, statusError(400,
                                     "the namespace of the provided object does not match "
                                     "the namespace sent on the request"));
    }
    metadata["namespace"] = ns;
  }
  std::unique_lock lock(mutex_);
  if (metadata.value("name", "").empty()) {
    const std::string prefix = metadata.value("generateName", "");
    if (prefix.empty()) {
      lock.unlock();
      return failed(seq, detail::invalidField(object, r, "", "metadata.name", Json(""),
                                              "name or generateName is required"));
    }
    metadata["name"] = prefix + std::to_string(++uids_);
  }
  const std::string name = metadata["name"];
  const Key key = keyOf(r, ns, name);
  if (objects_.contains(key)) {
    lock.unlock();
    return failed(seq, detail::alreadyExists(r, name));
  }
  metadata["uid"] = "fake-uid-" + std::to_string(++uids_);
  metadata["creationTimestamp"] = nowText();
  metadata["generation"] = 1;
  metadata.erase("deletionTimestamp");
  return commitLocked(r, key, std::move(object), false);
}

Result<Json> FakeKubeClient::update(const Resource& r, const std::string& ns, const Json& obj,
                                    const std::string& subresource) {
  std::size_t seq = 0;
  const std::string name = nameOf(obj);
  if (auto e = begin({.verb = Verb::Update,
                      .resource = r,
                      .ns = ns,
                      .name = name,
                      .subresource = subresource,
                      .body = obj},
                     &seq)) {
    return std::unexpected(*e);
  }
  std::unique_lock lock(mutex_);
  const Key key = keyOf(r, ns, name);
  const auto it = objects_.find(key);
  Result<Json> result = it == objects_.end()
                            ? Result<Json>(std::unexpected(detail::notFound(r, name)))
                            : writeLocked(r, key, it->second, obj, subresource);
  lock.unlock();
  if (!result) return failed(seq, result.error());
  return result;
}

Result<Json> FakeKubeClient::patch(const Resource& r, const std::string& ns,
                                   const std::string& name, PatchType type, const Json& patch,
                                   const std::string& subresource) {
  std::size_t seq = 0;
  if (auto e = begin({.verb = Verb::Patch,
                      .resource = r,
                      .ns = ns,
                      .name = name,
                      .subresource = subresource,
                      .body = patch,
                      .patch_type = type},
                     &seq)) {
    return std::unexpected(*e);
  }
  std::unique_lock lock(mutex_);
  const Key key = keyOf(r, ns, name);
  const auto it = objects_.find(key);
  Result<Json> result;
  if (it == objects_.end()) {
    result = std::unexpected(detail::notFound(r, name));
  } else {
    Json patched = it->second;
    switch (type) {
      case PatchType::Merge:
        if (!patch.is_object()) {
          result = std::unexpected(statusError(400, "a merge patch must be a JSON object"));
        } else {
          patched.merge_patch(patch);
        }
        break;
      case PatchType::Json:
        try {
          patched = it->second.patch(patch);
        } catch (const nlohmann::json::exception& e) {
          // The API server answers a JSON patch it cannot apply (a failed "test" too) with 422.
          result = std::unexpected(statusError(422, e.what()));
        }
        break;
      case PatchType::StrategicMerge:
        result = std::unexpected(
            statusError(415, "the fake serves no strategic merge patch; send a merge or JSON patch",
                        "UnsupportedMediaType"));
        break;
    }
    if (result) result = writeLocked(r, key, it->second, std::move(patched), subresource);
  }
  lock.unlock();
  if (!result) return failed(seq, result.error());
  return result;
}

Result<Json> FakeKubeClient::remove(const Resource& r, const std::string& ns,
                                    const std::string& name, const DeleteOptions& opts) {
  std::size_t seq = 0;
  if (auto e = begin(
          {.verb = Verb::Remove, .resource = r, .ns = ns, .name = name, .delete_options = opts},
          &seq)) {
    return std::unexpected(*e);
  }
  std::unique_lock lock(mutex_);
  const Key key = keyOf(r, ns, name);
  const auto it = objects_.find(key);
  std::optional<Error> error;
  if (it == objects_.end()) {
    error = detail::notFound(r, name);
  } else if (const auto uid = metaString(it->second, "uid");
             opts.precondition_uid && *opts.precondition_uid != uid) {
    error = detail::preconditionFailed(r, name, "UID", *opts.precondition_uid, uid);
  } else if (const auto rv = metaString(it->second, "resourceVersion");
             opts.precondition_resource_version && *opts.precondition_resource_version != rv) {
    error = detail::preconditionFailed(r, name, "ResourceVersion",
                                       *opts.precondition_resource_version, rv);
  }
  if (error) {
    lock.unlock();
    return failed(seq, *error);
  }
  if (hasFinalizers(it->second)) {
    // Deletion waits for the finalizers; the first delete marks the object.
    if (it->second["metadata"].contains("deletionTimestamp")) return it->second;
    Json object = it->second;
    object["metadata"]["deletionTimestamp"] = nowText();
    object["metadata"]["deletionGracePeriodSeconds"] = 0;
    return commitLocked(r, key, std::move(object), false);
  }
  // No garbage collector here: whatever the propagation policy, the object goes at once.
  Json object = std::move(it->second);
  objects_.erase(it);
  object["metadata"]["resourceVersion"] = versionText(++rv_);
  recordLocked(r, WatchEventType::Deleted, object);
  return object;
}

}  // namespace shardscaler::k8s::testing
