// Prometheus's hashmod, held to what a real Prometheus computed (testdata/prometheus_hashmod.tsv,
// recorded from a running server's /api/v1/targets), and the shard values built on it.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "shardscaler/resharding/hashmod.h"
#include "shardscaler/resharding/shard_value.h"

namespace shardscaler::resharding {
namespace {

struct Row {
  std::string value;
  uint64_t modulus = 0;
  uint64_t hashmod = 0;
};

std::vector<Row> fixture() {
  std::ifstream in(SHARDSCALER_HASHMOD_FIXTURE);
  if (!in) throw std::runtime_error("cannot read " SHARDSCALER_HASHMOD_FIXTURE);
  std::vector<Row> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line.starts_with('#')) continue;
    const size_t a = line.find('\t');
    const size_t b = line.find('\t', a + 1);
    rows.push_back({nlohmann::json::parse(line.substr(0, a)).get<std::string>(),
                    std::stoull(line.substr(a + 1, b - a - 1)), std::stoull(line.substr(b + 1))});
  }
  return rows;
}

TEST(Hashmod, AgreesWithWhatARealPrometheusComputed) {
  const auto rows = fixture();
  ASSERT_GE(rows.size(), 100u);
  for (const Row& row : rows) {
    EXPECT_EQ(hashmod(row.value, row.modulus), row.hashmod)
        << "value " << nlohmann::json(row.value).dump() << " modulus " << row.modulus;
  }
}

TEST(Hashmod, UsesAllSixtyFourBitsOfTheDigestTail) {
  // A modulus near 2^64 shows the whole tail: these differ in their top bits.
  const uint64_t big = 18446744073709551557ULL;
  EXPECT_NE(hashmod("a", big) >> 56, 0u);
}

TEST(Hashmod, RefusesAZeroModulus) { EXPECT_THROW(hashmod("a", 0), std::invalid_argument); }

TEST(ShardValue, HashesToItsShardForEveryShardOfACount) {
  for (int32_t shards : {1, 2, 3, 7, 9, 10, 64, 101}) {
    for (int32_t s = 0; s < shards; ++s) {
      const std::string v = shardValue(s, shards);
      EXPECT_EQ(hashmod(v, static_cast<uint64_t>(shards)), static_cast<uint64_t>(s)) << v;
      EXPECT_TRUE(v.starts_with(std::to_string(s) + "-")) << v;
      EXPECT_TRUE(isShardValue(v, s, shards)) << v;
    }
  }
}

TEST(ShardValue, IsCheckedForFormAndHash) {
  const std::string v = shardValue(3, 7);
  EXPECT_FALSE(isShardValue(v, 2, 7));
  EXPECT_FALSE(isShardValue("3-", 3, 7));
  EXPECT_FALSE(isShardValue("3-x", 3, 7));
  EXPECT_FALSE(isShardValue(v, 3, 3));
  EXPECT_FALSE(isShardValue(v, 7, 7));
  // A value right for one count is, in general, not for another.
  int wrong = 0;
  for (int32_t s = 0; s < 8; ++s) wrong += isShardValue(shardValue(s, 8), s, 9) ? 0 : 1;
  EXPECT_GT(wrong, 0);
}

}  // namespace
}  // namespace shardscaler::resharding
