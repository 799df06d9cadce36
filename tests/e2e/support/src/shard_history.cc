#include "shardscaler/e2e/shard_history.h"
#include "shardscaler/e2e/resources.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <stdexcept>

#include "shardscaler/e2e/cluster.h"
#include "shardscaler/k8s_client/kube_config.h"
#include "shardscaler/k8s_client/rest_client.h"

namespace shardscaler::e2e {
namespace {

std::string nameOf(const Json& object) {
  return object.contains("metadata") ? object["metadata"].value("name", "") : "";
}

std::string resourceVersionOf(const Json& object) {
  return object.contains("metadata") ? object["metadata"].value("resourceVersion", "") : "";
}

std::string uidOf(const Json& object) {
  return object.contains("metadata") ? object["metadata"].value("uid", "") : "";
}

}  // namespace

std::uint64_t revisionOf(const Json& object) {
  const std::string rv = resourceVersionOf(object);
  std::uint64_t value = 0;
  std::from_chars(rv.data(), rv.data() + rv.size(), value);
  return value;
}

ShardHistory::ShardHistory(std::string ns) : ns_(std::move(ns)) {
  auto config = k8s::loadKubeconfigFiles({cluster().kubeconfigPath()});
  if (!config) throw std::runtime_error("admin kubeconfig: " + config.error().describe());
  client_ = std::make_unique<k8s::RestClient>(std::move(*config));
  threads_.emplace_back(
      [this] { record(k8s::resources::statefulSets(), HistoryKind::StatefulSet); });
  threads_.emplace_back([this] { record(kPrometheuses, HistoryKind::Target); });
  const bool listed = test_kit::eventually(std::chrono::seconds(30), kPoll, [&](std::string*) {
    return listed_.load() == static_cast<int>(threads_.size());
  });
  if (!listed) {
    stop();
    throw std::runtime_error("the history of namespace " + ns_ + " could not list its objects");
  }
}

ShardHistory::~ShardHistory() { stop(); }

void ShardHistory::stop() {
  stop_ = true;
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

std::vector<HistoryEvent> ShardHistory::events() const {
  std::lock_guard lock(mutex_);
  std::vector<HistoryEvent> out = events_;
  std::ranges::stable_sort(out, {}, &HistoryEvent::revision);
  return out;
}

std::vector<std::string> ShardHistory::notes() const {
  std::lock_guard lock(mutex_);
  return notes_;
}

void ShardHistory::append(HistoryEvent event) {
  event.seen = std::chrono::steady_clock::now();
  event.seen_wall = std::chrono::system_clock::now();
  std::lock_guard lock(mutex_);
  events_.push_back(std::move(event));
}

void ShardHistory::record(const k8s::Resource& resource, HistoryKind kind) {
  std::map<std::string, Json> known;  // by name, as last seen
  std::string resume;                 // "" = list first
  bool first_list = true;
  auto note = [&](std::string text) {
    std::lock_guard lock(mutex_);
    notes_.push_back(resource.describe() + ": " + std::move(text));
  };
  while (!stop_) {
    if (resume.empty()) {
      auto list = k8s::listAll(*client_, resource, ns_);
      if (!list) {
        note("list failed: " + list.error().describe());
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        continue;
      }
      std::map<std::string, Json> fresh;
      for (const Json& item : (*list)["items"]) fresh[nameOf(item)] = item;
      const std::uint64_t list_revision = revisionOf((*list));
      for (const auto& [name, old] : known) {
        auto it = fresh.find(name);
        if (it != fresh.end() && uidOf(it->second) == uidOf(old)) continue;
        // Gone at some revision in the gap; the list's is an upper bound.
        append({.revision = list_revision,
                .kind = kind,
                .type = k8s::WatchEventType::Deleted,
                .from_relist = true,
                .object = old});
      }
      for (const auto& [name, object] : fresh) {
        auto it = known.find(name);
        if (it != known.end() && resourceVersionOf(it->second) == resourceVersionOf(object)) {
          continue;
        }
        const bool added = it == known.end() || uidOf(it->second) != uidOf(object);
        append({.revision = revisionOf(object),
                .kind = kind,
                .type = added ? k8s::WatchEventType::Added : k8s::WatchEventType::Modified,
                .from_relist = !first_list,
                .object = object});
      }
      known = std::move(fresh);
      resume = resourceVersionOf(*list);
      if (first_list) ++listed_;
      first_list = false;
    }
    k8s::WatchOptions options;
    options.resource_version = resume;
    options.timeout_seconds = 60;
    auto watched = client_->watch(
        resource, ns_, options,
        [&](k8s::WatchEvent&& e) {
          if (e.type == k8s::WatchEventType::Bookmark || e.type == k8s::WatchEventType::Error) {
            if (e.type == k8s::WatchEventType::Bookmark) resume = resourceVersionOf(e.object);
            return true;
          }
          resume = resourceVersionOf(e.object);
          if (e.type == k8s::WatchEventType::Deleted) {
            known.erase(nameOf(e.object));
          } else {
            known[nameOf(e.object)] = e.object;
          }
          append({.revision = revisionOf(e.object),
                  .kind = kind,
                  .type = e.type,
                  .object = std::move(e.object)});
          return true;
        },
        &stop_);
    if (!watched && !stop_) {
      note("watch ended: " + watched.error().describe());
      if (watched.error().is(k8s::ErrorKind::Gone)) {
        resume.clear();
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
  }
}

}  // namespace shardscaler::e2e
