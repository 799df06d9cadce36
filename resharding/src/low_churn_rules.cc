#include "shardscaler/resharding/low_churn_rules.h"

#include <charconv>
#include <map>
#include <optional>

#include "shardscaler/resharding/shard_value.h"

namespace shardscaler::resharding {
namespace {

using Json = nlohmann::json;

// Jobs of the kinds whose sharding rules the operator always appends (ServiceMonitors,
// PodMonitors, Probes: `appendShardingRelabelingWithAddress`/`ForProbes`); every other job is a
// ScrapeConfig's, whose rules it skips after any hashmod (`...WithAddressIfMissing`), ours too.
constexpr std::string_view kOperatorShardedJobs = "(?:serviceMonitor|podMonitor|probe)/.*";
// Kept where the operator adds no keep of its own: on the shard whose value __tmp_hash carries,
// or on every shard when a rule before ours set __tmp_disable_sharding (as the operator's keep).
constexpr std::string_view kKeepRegex = ";.*;.*|true;$(SHARD)-[0-9]+;.*|true;.*;.+";

std::string key(std::string_view k) { return std::string(k); }

Json replaceRule(const std::vector<std::string_view>& sources, std::string_view regex,
                 std::string_view target, std::string_view replacement) {
  Json rule = Json::object();
  if (!sources.empty()) {
    rule["sourceLabels"] = Json::array();
    for (auto s : sources) rule["sourceLabels"].push_back(key(s));
  }
  if (!regex.empty()) rule["regex"] = key(regex);
  rule["targetLabel"] = key(target);
  rule["replacement"] = key(replacement);
  rule["action"] = "replace";
  return rule;
}

std::string bucketList(const BucketTable& table, int32_t shard) {
  std::string out;
  for (int32_t b = 0; b < table.buckets(); ++b) {
    if (table.shard_of_bucket[static_cast<size_t>(b)] != shard) continue;
    if (!out.empty()) out += '|';
    out += std::to_string(b);
  }
  return out;
}

std::optional<int64_t> parseInt(std::string_view text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::string stringField(const Json& rule, const char* field) {
  auto it = rule.find(field);
  return it != rule.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string firstSource(const Json& rule) {
  auto it = rule.find("sourceLabels");
  if (it == rule.end() || !it->is_array() || it->empty() || !(*it)[0].is_string()) return "";
  return (*it)[0].get<std::string>();
}

// The parts of an unquoted regex alternation ("a|b\|c" -> "a", "b|c").
std::vector<std::string> splitAlternation(std::string_view regex) {
  std::vector<std::string> parts(1);
  for (size_t i = 0; i < regex.size(); ++i) {
    if (regex[i] == '\\' && i + 1 < regex.size()) {
      parts.back() += regex[++i];
    } else if (regex[i] == '|') {
      parts.emplace_back();
    } else {
      parts.back() += regex[i];
    }
  }
  return parts;
}

// The jobs shardscaler's keep rule lists after the operator's sharded ones: the jobs that shard
// themselves.
Expected<std::vector<std::string>> keepRuleJobs(const Json& rule) {
  const std::string regex = stringField(rule, "regex");
  if (!regex.starts_with(kOperatorShardedJobs)) {
    return std::unexpected("the keep rule's job list is not shardscaler's");
  }
  const std::string_view jobs = std::string_view(regex).substr(kOperatorShardedJobs.size());
  if (!jobs.empty() && jobs.front() != '|') {
    return std::unexpected("the keep rule's job list is not shardscaler's");
  }
  std::vector<std::string> parts = splitAlternation(jobs);
  return std::vector<std::string>(parts.begin() + 1, parts.end());
}

}  // namespace

std::string quoteRegex(std::string_view literal) {
  std::string out;
  for (char c : literal) {
    if (std::string_view("\\.+*?()|[]{}^$").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

LowChurnRules makeRules(BucketTable table, std::vector<std::string> own_sharding_jobs,
                        const std::vector<std::string>& previous_values) {
  LowChurnRules rules{.table = std::move(table), .own_sharding_jobs = std::move(own_sharding_jobs)};
  const int32_t shards = rules.table.shards;
  for (int32_t s = 0; s < shards; ++s) {
    const auto i = static_cast<size_t>(s);
    if (i < previous_values.size() && isShardValue(previous_values[i], s, shards)) {
      rules.shard_values.push_back(previous_values[i]);
    } else {
      rules.shard_values.push_back(shardValue(s, shards));
    }
  }
  return rules;
}

bool isOwnRule(const Json& rule) {
  if (!rule.is_object()) return false;
  return stringField(rule, "targetLabel").starts_with(kLabelPrefix) ||
         firstSource(rule).starts_with(kLabelPrefix);
}

Json toRelabelings(const LowChurnRules& rules) {
  const BucketTable& table = rules.table;
  Json out = Json::array();
  out.push_back(replaceRule({"__address__"}, "(.*)", kKeyLabel, "$1"));
  out.push_back(replaceRule({"job", "__param_target"}, "probe/.+;(.+)", kKeyLabel, "$1"));
  out.push_back(replaceRule({kHashLabel}, "(.+)", kKeyLabel, "$1"));
  out.push_back(Json{{"sourceLabels", Json::array({key(kKeyLabel)})},
                     {"targetLabel", key(kBucketLabel)},
                     {"modulus", table.buckets()},
                     {"action", "hashmod"}});
  out.push_back(replaceRule({}, "", kShardsLabel, std::to_string(table.shards)));
  for (int32_t s = 0; s < table.shards; ++s) {
    const std::string buckets = bucketList(table, s);
    if (buckets.empty()) continue;
    out.push_back(replaceRule({kBucketLabel}, buckets, kHashLabel,
                              rules.shard_values[static_cast<size_t>(s)]));
  }
  out.push_back(replaceRule({}, "", kKeepLabel, "true"));
  std::string operator_sharded(kOperatorShardedJobs);
  for (const std::string& job : rules.own_sharding_jobs) operator_sharded += "|" + quoteRegex(job);
  out.push_back(replaceRule({"job"}, operator_sharded, kKeepLabel, ""));
  out.push_back(Json{
      {"sourceLabels", Json::array({key(kKeepLabel), key(kHashLabel), key(kDisableShardingLabel)})},
      {"regex", key(kKeepRegex)},
      {"action", "keep"}});
  return out;
}

Expected<LowChurnRules> parseRules(const Json& relabelings) {
  if (!relabelings.is_array()) return std::unexpected("the relabelings are not a list");
  std::optional<int64_t> buckets;
  std::optional<int64_t> shards;
  struct ShardRule {
    std::string buckets;
    std::string value;
  };
  std::vector<ShardRule> shard_rules;
  std::optional<std::vector<std::string>> own_sharding_jobs;
  for (const Json& rule : relabelings) {
    if (!isOwnRule(rule)) continue;
    const std::string target = stringField(rule, "targetLabel");
    const std::string source = firstSource(rule);
    if (target == kBucketLabel) {
      auto modulus = rule.find("modulus");
      if (modulus == rule.end() || !modulus->is_number_integer()) {
        return std::unexpected("the bucket rule has no modulus");
      }
      buckets = modulus->get<int64_t>();
    } else if (target == kShardsLabel) {
      shards = parseInt(stringField(rule, "replacement"));
      if (!shards) return std::unexpected("the shard count rule does not hold a number");
    } else if (source == kBucketLabel && target == kHashLabel) {
      shard_rules.push_back({stringField(rule, "regex"), stringField(rule, "replacement")});
    } else if (target == kKeepLabel && source == "job") {
      auto jobs = keepRuleJobs(rule);
      if (!jobs) return std::unexpected(jobs.error());
      own_sharding_jobs = std::move(*jobs);
    }
  }
  if (!buckets && !shards && shard_rules.empty()) {
    return std::unexpected("no shardscaler rules");
  }
  if (!buckets || *buckets <= 0 || *buckets > 1'000'000) {
    return std::unexpected("no readable bucket count");
  }
  if (!shards || *shards <= 0 || *shards > *buckets) {
    return std::unexpected("no readable shard count");
  }
  BucketTable table{.shards = static_cast<int32_t>(*shards),
                    .shard_of_bucket = std::vector<int32_t>(static_cast<size_t>(*buckets), -1)};
  std::vector<std::string> values(static_cast<size_t>(*shards));
  for (const ShardRule& rule : shard_rules) {
    const size_t dash = rule.value.find('-');
    const auto shard = parseInt(std::string_view(rule.value).substr(0, dash));
    if (dash == std::string::npos || !shard || *shard < 0 || *shard >= *shards) {
      return std::unexpected("a bucket rule names no shard of " + std::to_string(*shards) + ": \"" +
                             rule.value + "\"");
    }
    const auto s = static_cast<int32_t>(*shard);
    if (!values[static_cast<size_t>(s)].empty()) {
      return std::unexpected("shard " + std::to_string(s) + " has two bucket rules");
    }
    values[static_cast<size_t>(s)] =
        isShardValue(rule.value, s, table.shards) ? rule.value : std::string("-");
    for (const std::string& part : splitAlternation(rule.buckets)) {
      const auto bucket = parseInt(part);
      if (!bucket || *bucket < 0 || *bucket >= *buckets) {
        return std::unexpected("shard " + std::to_string(s) + " lists bucket \"" + part + "\" of " +
                               std::to_string(*buckets));
      }
      int32_t& slot = table.shard_of_bucket[static_cast<size_t>(*bucket)];
      if (slot != -1) return std::unexpected("bucket " + part + " is listed twice");
      slot = s;
    }
  }
  for (int32_t b = 0; b < table.buckets(); ++b) {
    if (table.shard_of_bucket[static_cast<size_t>(b)] == -1) {
      return std::unexpected("bucket " + std::to_string(b) + " is on no shard");
    }
  }
  if (!own_sharding_jobs) return std::unexpected("no keep rule");
  for (auto& v : values) {
    if (v == "-") v.clear();
  }
  return LowChurnRules{.table = std::move(table),
                       .shard_values = std::move(values),
                       .own_sharding_jobs = std::move(*own_sharding_jobs)};
}

}  // namespace shardscaler::resharding
