#include "shardscaler/ingestion/ingestion_query.h"

namespace shardscaler::ingestion {
namespace {

// A StatefulSet pod ordinal as Kubernetes writes it: decimal, no leading zero.
constexpr std::string_view kOrdinalRegex = "(0|[1-9][0-9]*)";

bool isOrdinal(std::string_view text) {
  if (text.empty() || (text.size() > 1 && text.front() == '0')) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

std::string_view samplesAppendedMetric(planner::TargetKind kind) {
  return kind == planner::TargetKind::Prometheus ? "prometheus_tsdb_head_samples_appended_total"
                                                 : "prometheus_agent_samples_appended_total";
}

std::string defaultQueryTemplate(planner::TargetKind kind) {
  std::string q = "sum by (pod) (rate(";
  q.append(samplesAppendedMetric(kind)).append("{namespace=\"").append(kNamespacePlaceholder);
  q.append("\",pod=~\"").append(kPodRegexPlaceholder).append("\"}[5m]))");
  return q;
}

std::string escapeRegex(std::string_view text) {
  static constexpr std::string_view kMeta = R"(\.+*?()|[]{}^$)";
  std::string out;
  out.reserve(text.size() + 8);
  for (char c : text) {
    if (kMeta.find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string escapePromqlString(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string targetPodRegex(planner::TargetKind kind, std::string_view target_name) {
  std::string r = escapeRegex(planner::statefulSetName(kind, target_name, 0));
  r.append("(-shard-[1-9][0-9]*)?-").append(kOrdinalRegex);
  return r;
}

std::string ingestionQuery(const IngestionTarget& target) {
  const std::string tmpl = target.query.empty() ? defaultQueryTemplate(target.kind) : target.query;
  const std::string ns = escapePromqlString(target.ns);
  const std::string pods = escapePromqlString(targetPodRegex(target.kind, target.target_name));
  // One left-to-right pass, so a replacement is never itself searched for placeholders.
  std::string out;
  out.reserve(tmpl.size() + pods.size());
  for (size_t i = 0; i < tmpl.size();) {
    const std::string_view rest = std::string_view(tmpl).substr(i);
    if (rest.starts_with(kPodRegexPlaceholder)) {
      out += pods;
      i += kPodRegexPlaceholder.size();
    } else if (rest.starts_with(kNamespacePlaceholder)) {
      out += ns;
      i += kNamespacePlaceholder.size();
    } else {
      out += tmpl[i++];
    }
  }
  return out;
}

std::optional<int32_t> shardOfPod(planner::TargetKind kind, std::string_view target_name,
                                  std::string_view pod) {
  const auto dash = pod.rfind('-');
  if (dash == std::string_view::npos || !isOrdinal(pod.substr(dash + 1))) return std::nullopt;
  const std::string_view sts = pod.substr(0, dash);
  const std::string shard0 = planner::statefulSetName(kind, target_name, 0);
  if (sts == shard0) return 0;
  const std::string shard_prefix = shard0 + "-shard-";
  if (!sts.starts_with(shard_prefix)) return std::nullopt;
  auto index = planner::parseShardIndex(sts.substr(shard_prefix.size()));
  // Shard 0 is never spelled "-shard-0".
  if (!index || *index == 0) return std::nullopt;
  return index;
}

}  // namespace shardscaler::ingestion
