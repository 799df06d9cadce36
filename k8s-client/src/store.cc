#include "shardscaler/k8s_client/store.h"

#include <algorithm>
#include <mutex>

namespace shardscaler::k8s {

namespace {

std::string_view metadataString(const Json& object, const char* field) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return {};
  auto value = meta->find(field);
  if (value == meta->end() || !value->is_string()) return {};
  return value->get_ref<const std::string&>();
}

bool changed(const Json& before, const Json& after) {
  auto old_rv = resourceVersionOf(before);
  auto new_rv = resourceVersionOf(after);
  if (!old_rv.empty() || !new_rv.empty()) return old_rv != new_rv;
  return before != after;
}

}  // namespace

std::string objectKey(std::string_view ns, std::string_view name) {
  if (ns.empty()) return std::string(name);
  std::string key;
  key.reserve(ns.size() + 1 + name.size());
  key.append(ns).append("/").append(name);
  return key;
}

std::string objectKey(const Json& object) {
  return objectKey(metadataString(object, "namespace"), metadataString(object, "name"));
}

std::string resourceVersionOf(const Json& object) {
  return std::string(metadataString(object, "resourceVersion"));
}

Store::Store(Indexers indexers) {
  for (auto& entry : indexers) indexes_[entry.first].function = std::move(entry.second);
}

void Store::indexLocked(const std::string& key, const Json& object) {
  for (auto& [name, index] : indexes_) {
    for (auto& value : index.function(object)) index.keys[std::move(value)].insert(key);
  }
}

void Store::unindexLocked(const std::string& key, const Json& object) {
  for (auto& [name, index] : indexes_) {
    for (const auto& value : index.function(object)) {
      auto it = index.keys.find(value);
      if (it == index.keys.end()) continue;
      it->second.erase(key);
      if (it->second.empty()) index.keys.erase(it);
    }
  }
}

std::vector<ObjectPtr> Store::byIndex(std::string_view index, std::string_view value) const {
  std::shared_lock lock(mutex_);
  std::vector<ObjectPtr> out;
  auto i = indexes_.find(index);
  if (i == indexes_.end()) return out;
  auto keys = i->second.keys.find(std::string(value));
  if (keys == i->second.keys.end()) return out;
  out.reserve(keys->second.size());
  for (const auto& key : keys->second) {
    if (auto it = objects_.find(key); it != objects_.end()) out.push_back(it->second);
  }
  return out;
}

ObjectPtr Store::get(std::string_view key) const {
  std::shared_lock lock(mutex_);
  auto it = objects_.find(std::string(key));
  return it == objects_.end() ? nullptr : it->second;
}

ObjectPtr Store::get(std::string_view ns, std::string_view name) const {
  return get(objectKey(ns, name));
}

std::vector<ObjectPtr> Store::list() const {
  std::shared_lock lock(mutex_);
  std::vector<ObjectPtr> out;
  out.reserve(objects_.size());
  for (const auto& [key, object] : objects_) out.push_back(object);
  return out;
}

std::vector<ObjectPtr> Store::listNamespace(std::string_view ns) const {
  std::shared_lock lock(mutex_);
  std::vector<ObjectPtr> out;
  for (const auto& [key, object] : objects_) {
    if (metadataString(*object, "namespace") == ns) out.push_back(object);
  }
  return out;
}

std::vector<std::string> Store::keys() const {
  std::shared_lock lock(mutex_);
  std::vector<std::string> out;
  out.reserve(objects_.size());
  for (const auto& [key, object] : objects_) out.push_back(key);
  return out;
}

std::size_t Store::size() const {
  std::shared_lock lock(mutex_);
  return objects_.size();
}

ObjectPtr Store::upsert(ObjectPtr object) {
  auto key = objectKey(*object);
  std::unique_lock lock(mutex_);
  auto& slot = objects_[key];
  if (!indexes_.empty()) {
    if (slot) unindexLocked(key, *slot);
    indexLocked(key, *object);
  }
  std::swap(slot, object);
  return object;
}

ObjectPtr Store::erase(const std::string& key) {
  std::unique_lock lock(mutex_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return nullptr;
  auto previous = std::move(it->second);
  objects_.erase(it);
  if (!indexes_.empty()) unindexLocked(key, *previous);
  return previous;
}

StoreDiff Store::replace(std::vector<ObjectPtr> objects) {
  std::unordered_map<std::string, ObjectPtr> next;
  next.reserve(objects.size());
  StoreDiff diff;
  std::unique_lock lock(mutex_);
  for (auto& object : objects) {
    auto key = objectKey(*object);
    auto old = objects_.find(key);
    if (old == objects_.end()) {
      diff.added.push_back(object);
    } else if (changed(*old->second, *object)) {
      diff.updated.emplace_back(old->second, object);
    } else {
      object = old->second;  // unchanged: keep the pointer readers may already hold
    }
    next[std::move(key)] = std::move(object);
  }
  std::vector<std::pair<std::string, ObjectPtr>> gone;
  for (auto& [key, object] : objects_) {
    if (!next.contains(key)) gone.emplace_back(key, std::move(object));
  }
  objects_ = std::move(next);
  for (auto& [name, index] : indexes_) index.keys.clear();
  if (!indexes_.empty()) {
    for (const auto& [key, object] : objects_) indexLocked(key, *object);
  }
  lock.unlock();
  std::sort(gone.begin(), gone.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  diff.deleted.reserve(gone.size());
  for (auto& [key, object] : gone) diff.deleted.push_back(std::move(object));
  return diff;
}

}  // namespace shardscaler::k8s
