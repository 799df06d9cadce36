// Which shard scrapes the targets of each bucket (hashmod of a target's key), and how that table
// follows the shard count so that a step moves no more targets than it must. Pure; a rescale never
// moves a bucket between two shards that both stay, nor to a shard that was there before.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace shardscaler::resharding {

// The least common multiple of 1 to 10: for those shard counts (and every other divisor) the
// modulo table below is the operator's own assignment.
inline constexpr int32_t kBucketsPerHundredShards = 2520;

// The bucket count for a ShardSet whose shards stay at or below `max_shards`: 2520 for every
// hundred shards begun, so that each shard holds at least 25 buckets.
int32_t bucketCount(int64_t max_shards);

struct BucketTable {
  int32_t shards = 0;
  std::vector<int32_t> shard_of_bucket;  // one entry per bucket, each in [0, shards)

  int32_t buckets() const { return static_cast<int32_t>(shard_of_bucket.size()); }
  friend bool operator==(const BucketTable&, const BucketTable&) = default;
};

// Bucket b on shard b mod `shards`. Since hashmod(key, B) mod N = hashmod(key, N) whenever N
// divides B, this is then exactly the operator's modulo sharding: switching to it moves nothing.
BucketTable moduloTable(int32_t buckets, int32_t shards);

// "" when the table has buckets, at least one shard, and every bucket names a shard in range;
// else what is wrong.
std::string problemWith(const BucketTable& table);

// What each shard carries: the sum of its buckets' weights.
std::vector<double> shardLoads(const BucketTable& table, std::span<const double> weights);

// The table for `shards` (> 0), from a valid table. `weights` has one entry (>= 0) per bucket: the
// targets it is known to hold; when they sum to 0 every bucket counts alike. Buckets of weight 0
// (no known target: where targets still to come land) are spread by count instead.
// - Fewer shards: the buckets of the removed shards go, heaviest first, each to the shard that
//   stays with the least load (empty ones: with the fewest buckets). Nothing else moves.
// - More shards: the least loaded new shard takes, from the most loaded old shard, the heaviest
//   bucket of at most half the gap between them, until none is left: the new shards end up
//   carrying about the mean; then empty buckets even out the bucket counts. Nothing else moves;
//   every old shard keeps a bucket and every new one gets one (when some old shard has two).
// The same input always gives the same table (ties go to the lower index).
BucketTable rescale(const BucketTable& from, int32_t shards, std::span<const double> weights);

}  // namespace shardscaler::resharding
