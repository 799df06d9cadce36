#include "fake_kube_client.h"

namespace shardscaler::serving::testing {

using k8s::ErrorKind;

FakeKubeClient::Key FakeKubeClient::key(const k8s::Resource& r, const std::string& ns,
                                        const std::string& name) {
  return {r.describe(), r.namespaced ? ns : std::string(), name};
}

Json FakeKubeClient::stampLocked(const Key& k, Json object) {
  object["metadata"]["resourceVersion"] = std::to_string(++resource_version_);
  objects_[k] = object;
  history_[k].push_back(object);
  return object;
}

Json FakeKubeClient::put(const k8s::Resource& r, Json object) {
  std::lock_guard lock(mutex_);
  const auto& metadata = object["metadata"];
  return stampLocked(key(r, metadata.value("namespace", ""), metadata.value("name", "")),
                     std::move(object));
}

std::optional<Json> FakeKubeClient::find(const k8s::Resource& r, const std::string& ns,
                                         const std::string& name) const {
  std::lock_guard lock(mutex_);
  const auto it = objects_.find(key(r, ns, name));
  if (it == objects_.end()) return std::nullopt;
  return it->second;
}

void FakeKubeClient::setHook(Hook hook) {
  std::lock_guard lock(mutex_);
  hook_ = std::move(hook);
}

int FakeKubeClient::writes() const {
  std::lock_guard lock(mutex_);
  return writes_;
}

std::vector<Json> FakeKubeClient::history(const k8s::Resource& r, const std::string& ns,
                                          const std::string& name) const {
  std::lock_guard lock(mutex_);
  const auto it = history_.find(key(r, ns, name));
  return it == history_.end() ? std::vector<Json>{} : it->second;
}

std::optional<k8s::Error> FakeKubeClient::runHook(Verb verb, const std::string& name) {
  Hook hook;
  {
    std::lock_guard lock(mutex_);
    hook = hook_;
  }
  return hook ? hook(verb, name) : std::nullopt;
}

k8s::Result<Json> FakeKubeClient::get(const k8s::Resource& r, const std::string& ns,
                                      const std::string& name, const std::string&) {
  if (auto error = runHook(Verb::Get, name)) return std::unexpected(*error);
  std::lock_guard lock(mutex_);
  const auto it = objects_.find(key(r, ns, name));
  if (it == objects_.end()) {
    return std::unexpected(apiError(ErrorKind::NotFound, 404, name + " not found"));
  }
  return it->second;
}

k8s::Result<Json> FakeKubeClient::list(const k8s::Resource&, const std::string&,
                                       const k8s::ListOptions&) {
  return std::unexpected(apiError(ErrorKind::Other, 501, "list is not faked"));
}

k8s::Result<Json> FakeKubeClient::create(const k8s::Resource& r, const std::string& ns,
                                         const Json& obj) {
  const std::string name = obj["metadata"].value("name", "");
  if (auto error = runHook(Verb::Create, name)) return std::unexpected(*error);
  std::lock_guard lock(mutex_);
  const Key k = key(r, ns, name);
  if (objects_.contains(k)) {
    return std::unexpected(apiError(ErrorKind::AlreadyExists, 409, name + " already exists"));
  }
  ++writes_;
  return stampLocked(k, obj);
}

k8s::Result<Json> FakeKubeClient::update(const k8s::Resource& r, const std::string& ns,
                                         const Json& obj, const std::string&) {
  const std::string name = obj["metadata"].value("name", "");
  if (auto error = runHook(Verb::Update, name)) return std::unexpected(*error);
  std::lock_guard lock(mutex_);
  const Key k = key(r, ns, name);
  const auto it = objects_.find(k);
  if (it == objects_.end()) return std::unexpected(apiError(ErrorKind::NotFound, 404, name));
  if (obj["metadata"].value("resourceVersion", "") !=
      it->second["metadata"].value("resourceVersion", "")) {
    return std::unexpected(apiError(ErrorKind::Conflict, 409, "the object has been modified"));
  }
  ++writes_;
  return stampLocked(k, obj);
}

k8s::Result<Json> FakeKubeClient::patch(const k8s::Resource& r, const std::string& ns,
                                        const std::string& name, k8s::PatchType type,
                                        const Json& patch, const std::string&) {
  if (auto error = runHook(Verb::Patch, name)) return std::unexpected(*error);
  if (type != k8s::PatchType::Json) {
    return std::unexpected(apiError(ErrorKind::Other, 501, "only JSON patches are faked"));
  }
  std::lock_guard lock(mutex_);
  const Key k = key(r, ns, name);
  const auto it = objects_.find(k);
  if (it == objects_.end()) return std::unexpected(apiError(ErrorKind::NotFound, 404, name));
  Json patched;
  try {
    patched = it->second.patch(patch);
  } catch (const std::exception& e) {
    return std::unexpected(apiError(ErrorKind::Invalid, 422, e.what()));
  }
  // As the API server: a resourceVersion the patch sets is an update precondition.
  if (patched["metadata"].value("resourceVersion", "") !=
      it->second["metadata"].value("resourceVersion", "")) {
    return std::unexpected(apiError(ErrorKind::Conflict, 409, "the object has been modified"));
  }
  ++writes_;
  return stampLocked(k, std::move(patched));
}

k8s::Result<Json> FakeKubeClient::remove(const k8s::Resource&, const std::string&,
                                         const std::string&, const k8s::DeleteOptions&) {
  return std::unexpected(apiError(ErrorKind::Other, 501, "delete is not faked"));
}

k8s::Result<void> FakeKubeClient::watch(const k8s::Resource&, const std::string&,
                                        const k8s::WatchOptions&, const k8s::WatchHandler&,
                                        const std::atomic<bool>*) {
  return std::unexpected(apiError(ErrorKind::Other, 501, "watch is not faked"));
}

}  // namespace shardscaler::serving::testing
