// The guard's decision on one admission request: everything it learns, read at most once each.
// Private to the guard: decision.cc holds the flow and the UPDATE rules, delete_rules.cc the
// DELETE rules.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "denial_text.h"
#include "shardscaler/api/shard_set.h"
#include "shardscaler/guard/decision.h"
#include "shardscaler/guard/untrusted_text.h"
#include "shardscaler/k8s_meta/object_meta.h"
#include "shardscaler/k8s_meta/time.h"
#include "shardscaler/planner/deadline.h"
#include "shardscaler/planner/target.h"

namespace shardscaler::guard::detail {

using Json = nlohmann::json;

// Label and annotation values as a denial message repeats them.
inline std::string valueText(const std::string* value) {
  if (value == nullptr) return "none";
  return fmt::format("\"{}\"", untrustedText(*value));
}

class Judgement : private VerdictBuilder {
 public:
  Judgement(const AdmissionRequest& request, LiveObjects& live,
            std::chrono::system_clock::time_point now, const GuardConfig& config)
      : VerdictBuilder(config), request_(request), live_(live), now_(now) {}

  Verdict run();

 private:
  // "StatefulSet monitoring/prometheus-main-shard-3 (shard 3 of Prometheus main)"
  std::string shardText() const {
    std::string text = fmt::format("StatefulSet {}/{}", request_.ns, name_);
    std::string of;
    if (verdict_.shard_index) of = fmt::format("shard {}", *verdict_.shard_index);
    if (!verdict_.target.empty())
      of += fmt::format("{}of {}", of.empty() ? "" : " ", verdict_.target);
    return of.empty() ? text : fmt::format("{} ({})", text, of);
  }
  // shardscaler's deadline of the subject: shardscaler.io/deletion-deadline, else the older name.
  const std::string* deadlineAnnotation() const {
    const std::string* value = k8s::meta::annotation(subject(), api::kDeletionDeadlineAnnotation);
    return value != nullptr ? value
                            : k8s::meta::annotation(subject(), api::kDeletionTimestampAnnotation);
  }
  std::string retainedText() const {
    const std::string* deadline = deadlineAnnotation();
    const std::string text = fmt::format("is retained by ShardSet {}", verdict_.shard_set);
    if (deadline == nullptr) {
      return fmt::format("{} but has no {} annotation, so it is kept (never delete on doubt)", text,
                         api::kDeletionTimestampAnnotation);
    }
    auto parsed = planner::parseDeletionTimestamp(*deadline);
    if (!parsed) {
      return fmt::format("{} but its {} is unreadable ({}), so it is kept (never delete on doubt)",
                         text, api::kDeletionTimestampAnnotation,
                         untrustedText(parsed.error(), 128));
    }
    if (parsed->isNever()) {
      return fmt::format("{} with no deadline ({} means never)", text, untrustedText(*deadline));
    }
    return fmt::format("{} until {}", text, k8s::formatRfc3339(parsed->time()));
  }

  const Json& subject() const { return request_.old_object; }
  const LiveRead& target();
  // Reads the ShardSet the guard label names into shard_set_; a verdict when that ends it.
  std::optional<Verdict> readShardSet(const std::string& name);
  std::optional<Verdict> cleanup();
  // Whether the namespace is being deleted (its controller and the garbage collector take
  // everything then); the read is made once.
  std::optional<Verdict> namespaceCleanup();
  std::optional<Verdict> collectRetained();
  std::optional<Verdict> deleteRetained();
  // A shard the operator's own retention keeps (an operator.prometheus.io/deletion-deadline that
  // is ahead, never, or unreadable) is not to be deleted by anyone.
  std::optional<Verdict> operatorRetention();
  std::optional<Verdict> deleteDue();
  std::optional<Verdict> deleteActive();
  std::optional<Verdict> deleteAboveTheCount(const std::optional<planner::Target>& target);
  Verdict readFailed(const std::string& what, const std::string& error) {
    return deny(kRuleReadFailed,
                fmt::format("cannot read {} ({}), so the {} of {} is refused until it can be "
                            "checked.",
                            what, failureKind(error), toString(request_.operation), shardText()),
                error);
  }
  std::optional<Verdict> judgeUpdate(const std::vector<std::string>& changes, bool reattach);

  const AdmissionRequest& request_;
  LiveObjects& live_;
  const std::chrono::system_clock::time_point now_;

  std::string name_;
  api::ShardSet shard_set_;
  std::optional<planner::TargetKind> target_kind_;
  std::optional<LiveRead> target_;
  std::optional<LiveRead> namespace_;
};

}  // namespace shardscaler::guard::detail
