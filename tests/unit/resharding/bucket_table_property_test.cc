// The bucket table's promises, over tables drawn by rapidcheck (random bucket counts, shard counts,
// weights and sequences of steps; a failure shrinks to the smallest case): a step moves only what
// it must, every table stays valid, and balance holds.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "resharding_property.h"
#include "shardscaler/resharding/bucket_table.h"
#include "shardscaler/resharding/hashmod.h"

namespace shardscaler::resharding {
namespace {

using testing::checkProperty;
using testing::uniform;

std::vector<double> drawWeights(int32_t buckets) {
  std::vector<double> w(static_cast<size_t>(buckets), 1.0);
  const int kind = uniform(0, 2);  // all alike, a few targets per bucket, or sparse and skewed
  if (kind == 0) return w;
  for (double& x : w) x = kind == 1 ? uniform(0, 4) : (uniform(0, 9) == 0 ? uniform(1, 30) : 0);
  return w;
}

// A table reached by a few random steps from the modulo table.
BucketTable drawTable(int32_t buckets, const std::vector<double>& w) {
  BucketTable table = moduloTable(buckets, uniform(1, std::min(buckets, 40)));
  for (int steps = uniform(0, 4); steps > 0; --steps) {
    table = rescale(table, uniform(1, std::min(buckets, 40)), w);
  }
  return table;
}

std::vector<int> counts(const BucketTable& t) {
  std::vector<int> c(static_cast<size_t>(t.shards), 0);
  for (int32_t s : t.shard_of_bucket) ++c[static_cast<size_t>(s)];
  return c;
}

int spread(const std::vector<int>& c) {
  return *std::ranges::max_element(c) - *std::ranges::min_element(c);
}

TEST(BucketTable, AScaleDownMovesOnlyTheRemovedShardsBuckets) {
  checkProperty(400, [] {
    const int32_t buckets = uniform(2, 600);
    const auto w = drawWeights(buckets);
    const BucketTable from = drawTable(buckets, w);
    if (from.shards < 2) return;
    const int32_t shards = uniform(1, from.shards - 1);
    const BucketTable to = rescale(from, shards, w);
    RC_ASSERT(problemWith(to).empty());
    RC_ASSERT(to.shards == shards);
    for (int32_t b = 0; b < buckets; ++b) {
      const auto i = static_cast<size_t>(b);
      if (from.shard_of_bucket[i] < shards)
        RC_ASSERT(to.shard_of_bucket[i] == from.shard_of_bucket[i]);
    }
  });
}

TEST(BucketTable, AScaleUpMovesBucketsOnlyToTheNewShardsAndAboutTheirShare) {
  checkProperty(400, [] {
    const int32_t buckets = uniform(2, 600);
    const auto w = drawWeights(buckets);
    const BucketTable from = drawTable(buckets, w);
    if (from.shards >= std::min(buckets, 40)) return;
    const int32_t shards = uniform(from.shards + 1, std::min(buckets, 40));
    const BucketTable to = rescale(from, shards, w);
    RC_ASSERT(problemWith(to).empty());
    double total = std::accumulate(w.begin(), w.end(), 0.0);
    std::vector<double> alike(w.size(), 1.0);
    const auto& weights = total > 0 ? w : alike;
    total = std::accumulate(weights.begin(), weights.end(), 0.0);
    const double heaviest = *std::ranges::max_element(weights);
    double moved = 0;
    for (int32_t b = 0; b < buckets; ++b) {
      const auto i = static_cast<size_t>(b);
      if (to.shard_of_bucket[i] == from.shard_of_bucket[i]) continue;
      RC_ASSERT(to.shard_of_bucket[i] >= from.shards);
      moved += weights[i];
    }
    // Each new shard stops at about the mean: past it by at most one bucket.
    RC_ASSERT(moved <= (shards - from.shards) * (total / shards + heaviest) + 1e-9);
    // Every old shard keeps a bucket.
    const auto c = counts(to);
    for (int32_t s = 0; s < from.shards; ++s) RC_ASSERT(c[static_cast<size_t>(s)] >= 1);
  });
}

TEST(BucketTable, EqualBucketsStayWithinTwoOfEachOtherOverAnySequenceOfSteps) {
  checkProperty(300, [] {
    const int32_t buckets = uniform(40, 3000);
    const std::vector<double> alike(static_cast<size_t>(buckets), 1.0);
    BucketTable table = moduloTable(buckets, uniform(1, 40));
    for (int steps = uniform(1, 12); steps > 0; --steps) {
      table = rescale(table, uniform(1, 40), alike);
      RC_ASSERT(spread(counts(table)) <= 2);
    }
  });
}

TEST(BucketTable, TheModuloTableIsTheOperatorsAssignmentForDivisors) {
  checkProperty(200, [] {
    const int32_t shards = uniform(1, 10);
    const BucketTable table = moduloTable(bucketCount(50), shards);
    const std::string key = "127.0." + std::to_string(uniform(0, 255)) + "." +
                            std::to_string(uniform(0, 255)) + ":" +
                            std::to_string(uniform(1, 65535));
    const auto bucket = hashmod(key, static_cast<uint64_t>(table.buckets()));
    RC_ASSERT(static_cast<uint64_t>(table.shard_of_bucket[bucket]) ==
              hashmod(key, static_cast<uint64_t>(shards)));
  });
}

TEST(BucketTable, TheSameInputGivesTheSameTable) {
  checkProperty(100, [] {
    const int32_t buckets = uniform(2, 600);
    const auto w = drawWeights(buckets);
    const BucketTable from = drawTable(buckets, w);
    const int32_t shards = uniform(1, std::min(buckets, 40));
    RC_ASSERT(rescale(from, shards, w) == rescale(from, shards, w));
  });
}

TEST(BucketTable, BucketCountGivesEachShardAtLeastTwentyFiveBuckets) {
  for (int64_t max : {1, 50, 100, 101, 500, 1000}) {
    EXPECT_EQ(bucketCount(max) % kBucketsPerHundredShards, 0) << max;
    EXPECT_GE(bucketCount(max), 25 * max) << max;
  }
}

TEST(BucketTable, InvalidInputIsRefused) {
  EXPECT_THROW(moduloTable(0, 1), std::invalid_argument);
  BucketTable bad{.shards = 2, .shard_of_bucket = {0, 2}};
  EXPECT_NE(problemWith(bad), "");
  EXPECT_THROW(rescale(bad, 1, std::vector<double>{1, 1}), std::invalid_argument);
  EXPECT_THROW(rescale(moduloTable(4, 2), 3, std::vector<double>{1, 1}), std::invalid_argument);
}

}  // namespace
}  // namespace shardscaler::resharding
