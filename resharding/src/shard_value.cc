#include "shardscaler/resharding/shard_value.h"

#include <charconv>
#include <stdexcept>

#include "shardscaler/resharding/hashmod.h"

namespace shardscaler::resharding {

std::string shardValue(int32_t shard, int32_t shards) {
  if (shards <= 0 || shard < 0 || shard >= shards) {
    throw std::invalid_argument("no shard " + std::to_string(shard) + " of " +
                                std::to_string(shards));
  }
  const std::string prefix = std::to_string(shard) + "-";
  // Each k hits with probability 1/shards; the loop ends with probability 1.
  for (uint64_t k = 0;; ++k) {
    std::string value = prefix + std::to_string(k);
    if (hashmod(value, static_cast<uint64_t>(shards)) == static_cast<uint64_t>(shard)) {
      return value;
    }
  }
}

bool isShardValue(std::string_view value, int32_t shard, int32_t shards) {
  if (shards <= 0 || shard < 0 || shard >= shards) return false;
  const std::string prefix = std::to_string(shard) + "-";
  if (!value.starts_with(prefix) || value.size() == prefix.size()) return false;
  const std::string_view k = value.substr(prefix.size());
  uint64_t parsed = 0;
  const auto [end, error] = std::from_chars(k.data(), k.data() + k.size(), parsed);
  if (error != std::errc() || end != k.data() + k.size()) return false;
  return hashmod(value, static_cast<uint64_t>(shards)) == static_cast<uint64_t>(shard);
}

}  // namespace shardscaler::resharding
