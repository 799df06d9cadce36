#include "shardscaler/e2e/lag_invariants.h"

#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <set>

#include "shardscaler/planner/deadline.h"
#include "shardscaler/planner/naming.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;

const Json& metadataOf(const Json& object) {
  static const Json empty = Json::object();
  return object.contains("metadata") && object["metadata"].is_object() ? object["metadata"] : empty;
}

const Json& fieldOf(const Json& object, const char* field) {
  static const Json empty = Json::object();
  const Json& metadata = metadataOf(object);
  return metadata.contains(field) && metadata[field].is_object() ? metadata[field] : empty;
}

std::string text(const Json& map, std::string_view key) {
  const std::string k(key);
  return map.contains(k) && map[k].is_string() ? map[k].get<std::string>() : std::string();
}

int effectiveShards(const Json& target) {
  if (!target.is_object()) return 0;  // no target: nothing is active
  const Json spec = target.value("spec", Json::object());
  const Json shards = spec.value("shards", Json());
  return shards.is_number_integer() ? std::max(1, shards.get<int>()) : 1;
}

std::string formatTime(std::chrono::system_clock::time_point t) {
  return planner::formatAnnotationTime(t);
}

double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

std::optional<int> shardIndexOf(const Json& object, const std::string& target_name) {
  const std::string base = "prometheus-" + target_name;
  const std::string name = metadataOf(object).value("name", "");
  if (name != base && !name.starts_with(base + "-shard-")) return std::nullopt;
  if (auto index =
          planner::parseShardIndex(text(fieldOf(object, "labels"), api::kOperatorShardLabel)))
    return *index;
  if (name == base) return 0;
  if (auto index = planner::parseShardIndex(name.substr(base.size() + 7))) return *index;
  return -1;
}

std::string DeletionStart::describe() const {
  return fmt::format(
      "StatefulSet {} (shard {}, uid {}) began to be deleted at {} (revision {}{}), the target "
      "then at {} shard(s); it was {}{}, deletion-timestamp \"{}\"",
      name, index, uid, formatTime(at), revision, from_relist ? ", seen only in a relist" : "",
      target_shards, attached ? "attached" : "detached", retained ? " and retained" : "", deadline);
}

std::vector<DeletionStart> deletionStarts(const std::vector<HistoryEvent>& history,
                                          const std::string& target_name) {
  std::vector<DeletionStart> out;
  std::set<std::string> started;  // uids
  Json target;                    // as of the event being read
  for (const HistoryEvent& e : history) {
    if (e.kind == HistoryKind::Target) {
      if (metadataOf(e.object).value("name", "") != target_name) continue;
      target = e.type == k8s::WatchEventType::Deleted ? Json() : e.object;
      continue;
    }
    const auto index = shardIndexOf(e.object, target_name);
    if (!index) continue;
    const Json& metadata = metadataOf(e.object);
    const std::string uid = metadata.value("uid", "");
    const bool deleting = metadata.contains("deletionTimestamp");
    if (started.contains(uid) || (!deleting && e.type != k8s::WatchEventType::Deleted)) continue;
    started.insert(uid);
    DeletionStart d{.name = metadata.value("name", ""),
                    .uid = uid,
                    .index = *index,
                    .revision = e.revision,
                    .at = e.seen_wall,
                    .seen = e.seen,
                    .target_shards = effectiveShards(target),
                    .from_relist = e.from_relist};
    if (deleting) {
      if (auto t = k8s::parseRfc3339(metadata.value("deletionTimestamp", ""))) {
        d.at = std::chrono::system_clock::time_point(
            std::chrono::duration_cast<std::chrono::system_clock::duration>(
                t->seconds.time_since_epoch()));
      }
    }
    const Json& labels = fieldOf(e.object, "labels");
    d.attached = labels.contains(std::string(api::kOperatorNameLabel));
    d.retained = text(labels, api::kRetainedLabel) == "true";
    d.deadline = text(fieldOf(e.object, "annotations"), api::kDeletionTimestampAnnotation);
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<Violation> checkDeletions(const std::vector<DeletionStart>& starts, bool retain) {
  std::vector<Violation> out;
  for (const DeletionStart& d : starts) {
    if (d.retained && !d.attached) {
      auto deadline = planner::parseDeletionTimestamp(d.deadline);
      if (deadline && !deadline->isNever() && deadline->expiredAt(d.at)) continue;
      out.push_back(
          {"DeletedBeforeDeadline",
           d.describe() + (deadline ? ": its deadline had not passed"
                                    : ": its deadline is unreadable (" + deadline.error() + ")")});
      continue;
    }
    if (retain) {
      out.push_back({"ActiveShardDeleted",
                     d.describe() + ": under Retain a shard is kept until its deadline"});
    } else if (d.index < d.target_shards) {
      out.push_back({"ActiveShardDeleted", d.describe() + ": below the target's shard count"});
    }
  }
  return out;
}

std::chrono::milliseconds PauseWindow::pastAnchor() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(end - anchor);
}

std::vector<PauseWindow> pauseWindows(const std::vector<HistoryEvent>& history,
                                      const std::vector<PauseCause>& causes,
                                      std::chrono::steady_clock::time_point until) {
  std::vector<PauseWindow> out;
  std::optional<std::chrono::steady_clock::time_point> since;
  auto close = [&](std::chrono::steady_clock::time_point end, bool open) {
    PauseWindow w{.start = *since, .end = end, .open = open, .anchor = *since};
    w.anchor_what = "the pause";
    for (const PauseCause& c : causes) {
      if (c.at > w.anchor && c.at < end) {
        w.anchor = c.at;
        w.anchor_what = c.what;
      }
    }
    out.push_back(std::move(w));
    since.reset();
  };
  for (const HistoryEvent& e : history) {
    if (e.kind != HistoryKind::Target) continue;
    const bool paused = e.type != k8s::WatchEventType::Deleted &&
                        e.object.value("spec", Json::object()).value("paused", false);
    if (paused && !since) since = e.seen;
    if (!paused && since) close(e.seen, false);
  }
  if (since) close(until, true);
  return out;
}

std::vector<Violation> checkPauses(const std::vector<PauseWindow>& windows,
                                   std::chrono::milliseconds bound) {
  std::vector<Violation> out;
  for (const PauseWindow& w : windows) {
    if (w.pastAnchor() <= bound) continue;
    out.push_back(
        {"PausedTooLong",
         fmt::format("the target was paused for {:.2f} s ({}), {:.2f} s after {}; the bound is "
                     "{:.2f} s",
                     seconds(w.end - w.start), w.open ? "still paused" : "then resumed",
                     seconds(w.end - w.anchor), w.anchor_what, seconds(bound))});
  }
  return out;
}

}  // namespace shardscaler::e2e
