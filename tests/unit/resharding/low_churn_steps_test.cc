// The acceptance on the pure parts: 1,000 static targets hashed as Prometheus does, the
// table written for 1 to 9 shards and back; each step moves at most 1/(N+1) + 2% of the targets
// (a scale-down only the removed shard's) and the busiest shard carries at most 0.05 more, over
// the mean, than under the operator's modulo sharding of the same targets. The e2e test checks
// the same with real Prometheus shards. The empty buckets, where targets still to come land,
// stay spread about evenly.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "shardscaler/resharding/bucket_table.h"
#include "shardscaler/resharding/hashmod.h"

namespace shardscaler::resharding {
namespace {

std::vector<std::string> targets(int count, int salt) {
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    out.push_back("127." + std::to_string(salt) + "." + std::to_string(i / 250) + "." +
                  std::to_string(i % 250 + 1) + ":9");
  }
  return out;
}

double busiest(const std::vector<int32_t>& shard_of_target, int32_t shards) {
  std::vector<int> load(static_cast<size_t>(shards), 0);
  for (int32_t s : shard_of_target) ++load[static_cast<size_t>(s)];
  return *std::ranges::max_element(load) * static_cast<double>(shards) /
         static_cast<double>(shard_of_target.size());
}

class LowChurnSteps : public ::testing::TestWithParam<int> {};

TEST_P(LowChurnSteps, MoveTheirShareAndStayAsBalancedAsModulo) {
  const auto keys = targets(1000, GetParam());
  const int32_t buckets = bucketCount(50);
  std::vector<double> weights(static_cast<size_t>(buckets), 0.0);
  std::vector<uint64_t> bucket_of;
  bucket_of.reserve(keys.size());
  for (const auto& k : keys) {
    bucket_of.push_back(hashmod(k, static_cast<uint64_t>(buckets)));
    weights[bucket_of.back()] += 1;
  }
  const auto assign = [&](const BucketTable& t) {
    std::vector<int32_t> out;
    out.reserve(bucket_of.size());
    for (uint64_t b : bucket_of) out.push_back(t.shard_of_bucket[b]);
    return out;
  };
  std::vector<int32_t> steps;
  for (int32_t n = 2; n <= 9; ++n) steps.push_back(n);
  for (int32_t n = 8; n >= 1; --n) steps.push_back(n);
  BucketTable table = moduloTable(buckets, 1);
  auto before = assign(table);
  for (int32_t shards : steps) {
    const int32_t from = table.shards;
    table = rescale(table, shards, weights);
    const auto after = assign(table);
    size_t moved = 0;
    for (size_t i = 0; i < after.size(); ++i) {
      if (after[i] == before[i]) continue;
      ++moved;
      if (shards < from) {
        EXPECT_GE(before[i], shards) << "a target of a staying shard moved";
      } else {
        EXPECT_GE(after[i], from) << "a target moved between old shards";
      }
    }
    const double fraction = static_cast<double>(moved) / static_cast<double>(keys.size());
    EXPECT_LE(fraction, 1.0 / std::max(from, shards) + 0.02) << from << " -> " << shards;
    std::vector<int32_t> modulo;
    modulo.reserve(keys.size());
    for (const auto& k : keys) {
      modulo.push_back(static_cast<int32_t>(hashmod(k, static_cast<uint64_t>(shards))));
    }
    EXPECT_LE(busiest(after, shards), busiest(modulo, shards) + 0.05) << from << " -> " << shards;
    // Where targets still to come land: every shard holds about its share of the buckets.
    std::vector<int> held(static_cast<size_t>(shards), 0);
    for (int32_t s : table.shard_of_bucket) ++held[static_cast<size_t>(s)];
    for (int h : held) {
      EXPECT_NEAR(h, static_cast<double>(buckets) / shards, 0.1 * buckets / shards)
          << from << " -> " << shards << ": " << ::testing::PrintToString(held);
    }
    before = after;
  }
}

INSTANTIATE_TEST_SUITE_P(TargetSets, LowChurnSteps, ::testing::Range(0, 8));

}  // namespace
}  // namespace shardscaler::resharding
