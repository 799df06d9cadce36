// The `__tmp_hash` value that sends a target to a chosen shard through the operator's own sharding
// rules (`hashmod(__tmp_hash, N)` kept where it equals $(SHARD)). Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace shardscaler::resharding {

// "<shard>-<k>" for the least k >= 0 with hashmod("<shard>-<k>", shards) == shard. The shard
// index leads the value, so that a keep rule can also read the shard from it directly.
std::string shardValue(int32_t shard, int32_t shards);

// `value` has that form for `shard`, and hashmod(value, shards) == shard.
bool isShardValue(std::string_view value, int32_t shard, int32_t shards);

}  // namespace shardscaler::resharding
