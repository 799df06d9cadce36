// What the reader keeps between reads: whether the guard is enforced (read once a minute a
// namespace), and who else writes each target (the HPAs, read once a minute a namespace, and the
// field managers a live read saw).
#include "shard_set_reader.h"

#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "shardscaler/api/api_resources.h"
#include "shardscaler/base/log.h"
#include "shardscaler/k8s_meta/object_meta.h"

namespace shardscaler::controller {

std::optional<bool> GuardStatusCache::enforced(const std::string& ns) {
  constexpr auto kMaxAge = std::chrono::minutes(1);
  if (!read_) return std::nullopt;
  std::optional<std::promise<bool>> read;
  std::shared_future<bool> enforced;
  {
    std::lock_guard lock(mutex_);
    Entry& entry = entries_[ns];
    if (!entry.enforced.valid() || clock_.monotonicNow() - entry.read_at >= kMaxAge) {
      read.emplace();
      entry = Entry{read->get_future().share(), clock_.monotonicNow()};
    }
    enforced = entry.enforced;
  }
  if (read) {
    std::string why;
    read->set_value(read_(ns, &why));  // a live read, outside the lock
  }
  return enforced.get();
}

void TargetWriters::noteLiveRead(const planner::Target& target) {
  std::lock_guard lock(mutex_);
  writers_[target.uid] = target.spec_writers;
}

void TargetWriters::fill(Observed& observed) {
  if (!observed.target) return;
  observed.target_hpas = hpasAimedAt(*observed.target);
  std::lock_guard lock(mutex_);
  if (auto it = writers_.find(observed.target->uid); it != writers_.end()) {
    observed.target_writers = it->second;
  }
}

std::shared_future<k8s::Json> TargetWriters::hpaList(const std::string& ns,
                                                     std::optional<std::promise<k8s::Json>>& read) {
  std::lock_guard lock(mutex_);
  HpaList& list = hpas_[ns];
  if (!list.items.valid() || clock_.monotonicNow() - list.read_at >= kHpaListPeriod) {
    read.emplace();
    list = HpaList{.read_at = clock_.monotonicNow(), .items = read->get_future().share()};
  }
  return list.items;
}

// A failed list (no RBAC for HPAs, say) reports none until the next; it never fails a reconcile.
k8s::Json TargetWriters::listHpas(const std::string& ns) {
  k8s::Json items = k8s::Json::array();
  auto list = client_.list(k8s::resources::horizontalPodAutoscalers(), ns, {});
  if (list) {
    for (const k8s::Json& hpa : list->value("items", k8s::Json::array())) {
      const k8s::Json& ref = k8s::meta::field(hpa, "spec", "scaleTargetRef");
      if (!ref.is_object()) continue;
      items.push_back({ref.value("kind", k8s::Json()), ref.value("name", k8s::Json()),
                       k8s::meta::stringAt(hpa, "metadata", "name")});
    }
  } else {
    base::logEvent(base::LogLevel::Debug, "listing HorizontalPodAutoscalers failed",
                   {{"namespace", ns}, {"error", list.error().describe()}});
  }
  return items;
}

std::future<void> TargetWriters::refreshHpas(const std::string& ns, k8s::TaskPool& pool) {
  std::optional<std::promise<k8s::Json>> read;
  hpaList(ns, read);
  if (!read) return {};
  return pool.submit(
      [this, ns, read = std::make_shared<std::promise<k8s::Json>>(std::move(*read))] {
        read->set_value(listHpas(ns));
      });
}

// One list of the namespace's HPAs a minute, shared by its ShardSets.
std::vector<std::string> TargetWriters::hpasAimedAt(const planner::Target& target) {
  std::optional<std::promise<k8s::Json>> read;
  const std::shared_future<k8s::Json> list = hpaList(target.ns, read);
  if (read) read->set_value(listHpas(target.ns));
  const k8s::Json& items = list.get();
  std::vector<std::string> aimed;
  for (const k8s::Json& item : items) {
    if (item[0] == std::string(planner::toString(target.kind)) && item[1] == target.name) {
      aimed.push_back(item[2].get<std::string>());
    }
  }
  return aimed;
}

}  // namespace shardscaler::controller
