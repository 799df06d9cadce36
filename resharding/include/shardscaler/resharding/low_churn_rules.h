// shardscaler's relabelings in a scrape class (the operator's RelabelConfig, camelCase): they put
// each target into one of B buckets and set `__tmp_hash` to the value of the bucket's shard, so
// that the operator's own rules (`hashmod(__tmp_hash, N)`, keep where it equals $(SHARD)) scrape
// it there; and keep targets on their shard where the operator adds no sharding rules of its own
// (ScrapeConfigs, after a hashmod rule). Pure; every rule it writes names a `__tmp_shardscaler_`
// label, so it never mistakes a user's rule for its own.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscaler/base/expected.h"
#include "shardscaler/resharding/bucket_table.h"

namespace shardscaler::resharding {

// The scrape class shardscaler owns on the target, and the prefix of every label its rules write.
inline constexpr std::string_view kScrapeClassName = "shardscaler-low-churn";
inline constexpr std::string_view kLabelPrefix = "__tmp_shardscaler_";
inline constexpr std::string_view kKeyLabel = "__tmp_shardscaler_key";
inline constexpr std::string_view kBucketLabel = "__tmp_shardscaler_bucket";
inline constexpr std::string_view kShardsLabel = "__tmp_shardscaler_shards";
inline constexpr std::string_view kKeepLabel = "__tmp_shardscaler_keep";
// The operator's sharding labels (pkg/prometheus/promcfg.go).
inline constexpr std::string_view kHashLabel = "__tmp_hash";
inline constexpr std::string_view kDisableShardingLabel = "__tmp_disable_sharding";

struct LowChurnRules {
  BucketTable table;
  // One per shard of the table: isShardValue(values[s], s, table.shards).
  std::vector<std::string> shard_values;
  // Jobs whose own rules shard them (a ScrapeConfig with a hashmod rule: the operator adds none
  // of its own there, with or without ours): ours set __tmp_hash but keep nothing for them.
  std::vector<std::string> own_sharding_jobs;

  friend bool operator==(const LowChurnRules&, const LowChurnRules&) = default;
};

// The rules with the value of each shard (kept from `previous_values` where they are still right
// for the table's shard count, so that an unchanged table gives unchanged rules).
LowChurnRules makeRules(BucketTable table, std::vector<std::string> own_sharding_jobs,
                        const std::vector<std::string>& previous_values = {});

// The relabelings, in order: the key (the address; a Probe's __param_target; __tmp_hash when a
// rule before these set it), its bucket (hashmod, modulus B), the shard count, each shard's bucket
// list to its __tmp_hash value, and the keep of jobs the operator does not shard after a hashmod.
nlohmann::json toRelabelings(const LowChurnRules& rules);

// A rule one of ours (names a kLabelPrefix label as target or first source).
bool isOwnRule(const nlohmann::json& rule);

// Our rules read back from a list of relabelings (others' rules are skipped). An error when there
// are none, or they do not make a valid table: a bucket missing or listed twice, a shard out of
// range, the bucket or shard count unreadable. Shard values that are wrong for the shard count
// come back empty (makeRules finds them again).
Expected<LowChurnRules> parseRules(const nlohmann::json& relabelings);

// A job name as an RE2 literal (Prometheus's anchored relabel regexes).
std::string quoteRegex(std::string_view literal);

}  // namespace shardscaler::resharding
