#include "shardscaler/resharding/bucket_table.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace shardscaler::resharding {
namespace {

// The weights rescale balances: as given, or all alike when they carry nothing.
std::vector<double> effectiveWeights(std::span<const double> weights, int32_t buckets) {
  if (static_cast<int32_t>(weights.size()) != buckets) {
    throw std::invalid_argument("rescale needs one weight per bucket");
  }
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  if (total > 0) return {weights.begin(), weights.end()};
  return std::vector<double>(static_cast<size_t>(buckets), 1.0);
}

// Heaviest first, then the lower bucket.
auto heavierFirst(const std::vector<double>& w) {
  return [&w](int32_t a, int32_t b) {
    const auto i = static_cast<size_t>(a);
    const auto j = static_cast<size_t>(b);
    return w[i] != w[j] ? w[i] > w[j] : a < b;
  };
}

// Load (the weights) and bucket count per shard, as a step changes them.
struct Shards {
  std::vector<double> load;
  std::vector<size_t> buckets;

  explicit Shards(size_t n) : load(n, 0.0), buckets(n, 0) {}
  void add(size_t s, double weight) {
    load[s] += weight;
    ++buckets[s];
  }
  void remove(size_t s, double weight) {
    load[s] -= weight;
    --buckets[s];
  }
  // Among [first, last): the least loaded, or the one with the fewest buckets; lowest on ties.
  size_t lightest(size_t first, size_t last) const {
    size_t best = first;
    for (size_t s = first + 1; s < last; ++s) {
      if (load[s] < load[best]) best = s;
    }
    return best;
  }
  size_t fewest(size_t first, size_t last) const {
    size_t best = first;
    for (size_t s = first + 1; s < last; ++s) {
      if (buckets[s] < buckets[best]) best = s;
    }
    return best;
  }
};

BucketTable shrink(const BucketTable& from, int32_t shards, const std::vector<double>& w) {
  BucketTable to{.shards = shards, .shard_of_bucket = from.shard_of_bucket};
  const auto staying = static_cast<size_t>(shards);
  Shards state(staying);
  std::vector<int32_t> moving;
  for (int32_t b = 0; b < from.buckets(); ++b) {
    const auto s = static_cast<size_t>(from.shard_of_bucket[static_cast<size_t>(b)]);
    if (s < staying) {
      state.add(s, w[static_cast<size_t>(b)]);
    } else {
      moving.push_back(b);
    }
  }
  // Buckets with targets, heaviest first, each to the least loaded shard; then the empty ones,
  // where targets still to come will land, each to the shard with the fewest buckets.
  std::ranges::sort(moving, heavierFirst(w));
  for (int32_t b : moving) {
    const double weight = w[static_cast<size_t>(b)];
    const size_t s = weight > 0 ? state.lightest(0, staying) : state.fewest(0, staying);
    to.shard_of_bucket[static_cast<size_t>(b)] = static_cast<int32_t>(s);
    state.add(s, weight);
  }
  return to;
}

BucketTable grow(const BucketTable& from, int32_t shards, const std::vector<double>& w) {
  BucketTable to{.shards = shards, .shard_of_bucket = from.shard_of_bucket};
  const auto old_shards = static_cast<size_t>(from.shards);
  const auto all_shards = static_cast<size_t>(shards);
  Shards state(all_shards);
  // Each old shard's buckets, heaviest first (so the empty ones last).
  std::vector<std::vector<int32_t>> owned(old_shards);
  for (int32_t b = 0; b < from.buckets(); ++b) {
    const auto s = static_cast<size_t>(from.shard_of_bucket[static_cast<size_t>(b)]);
    state.add(s, w[static_cast<size_t>(b)]);
    owned[s].push_back(b);
  }
  for (auto& buckets : owned) std::ranges::sort(buckets, heavierFirst(w));
  const auto move = [&](size_t donor, std::vector<int32_t>::iterator pick, size_t receiver) {
    const double weight = w[static_cast<size_t>(*pick)];
    to.shard_of_bucket[static_cast<size_t>(*pick)] = static_cast<int32_t>(receiver);
    state.add(receiver, weight);
    state.remove(donor, weight);
    owned[donor].erase(pick);
  };
  // The least loaded new shard takes, from the most loaded old shard that can spare a bucket, the
  // heaviest bucket of at most half the gap between them, until none is left: no bucket moves
  // twice, so it ends, with the new shards carrying about the mean and nothing moved between old
  // shards.
  while (true) {
    const size_t receiver = state.lightest(old_shards, all_shards);
    size_t donor = old_shards;
    for (size_t s = 0; s < old_shards; ++s) {
      if (owned[s].size() >= 2 && (donor == old_shards || state.load[s] > state.load[donor])) {
        donor = s;
      }
    }
    if (donor == old_shards) break;
    const double gap = state.load[donor] - state.load[receiver];
    auto pick = std::ranges::find_if(owned[donor], [&](int32_t b) {
      const double weight = w[static_cast<size_t>(b)];
      return weight > 0 && weight <= gap / 2;
    });
    if (pick == owned[donor].end()) break;
    move(donor, pick, receiver);
  }
  // Then empty buckets, which move no target, even out the bucket counts (where targets still to
  // come will land): the new shard with the fewest takes one from the old shard with the most.
  while (true) {
    const size_t receiver = state.fewest(old_shards, all_shards);
    size_t donor = old_shards;
    for (size_t s = 0; s < old_shards; ++s) {
      const bool spare = owned[s].size() >= 2 && w[static_cast<size_t>(owned[s].back())] == 0;
      if (spare && (donor == old_shards || state.buckets[s] > state.buckets[donor])) donor = s;
    }
    if (donor == old_shards || state.buckets[donor] <= state.buckets[receiver] + 1) break;
    move(donor, std::prev(owned[donor].end()), receiver);
  }
  // A new shard that took nothing (its share is all in buckets too heavy to split) still gets a
  // bucket, the lightest of the old shard with the most.
  for (size_t receiver = old_shards; receiver < all_shards; ++receiver) {
    if (state.buckets[receiver] > 0) continue;
    size_t donor = 0;
    for (size_t s = 1; s < old_shards; ++s) {
      if (owned[s].size() > owned[donor].size()) donor = s;
    }
    if (owned[donor].size() < 2) break;
    move(donor, std::prev(owned[donor].end()), receiver);
  }
  return to;
}

}  // namespace

int32_t bucketCount(int64_t max_shards) {
  const int64_t hundreds = std::max<int64_t>(1, (max_shards + 99) / 100);
  return static_cast<int32_t>(std::min<int64_t>(hundreds, 10) * kBucketsPerHundredShards);
}

BucketTable moduloTable(int32_t buckets, int32_t shards) {
  if (buckets <= 0 || shards <= 0) throw std::invalid_argument("a table needs buckets and shards");
  BucketTable table{.shards = shards,
                    .shard_of_bucket = std::vector<int32_t>(static_cast<size_t>(buckets))};
  for (int32_t b = 0; b < buckets; ++b) table.shard_of_bucket[static_cast<size_t>(b)] = b % shards;
  return table;
}

std::string problemWith(const BucketTable& table) {
  if (table.shards <= 0) return "no shards";
  if (table.shard_of_bucket.empty()) return "no buckets";
  for (int32_t b = 0; b < table.buckets(); ++b) {
    const int32_t s = table.shard_of_bucket[static_cast<size_t>(b)];
    if (s < 0 || s >= table.shards) {
      return "bucket " + std::to_string(b) + " names shard " + std::to_string(s) + " of " +
             std::to_string(table.shards);
    }
  }
  return "";
}

std::vector<double> shardLoads(const BucketTable& table, std::span<const double> weights) {
  std::vector<double> load(static_cast<size_t>(std::max(table.shards, 0)), 0.0);
  for (int32_t b = 0; b < table.buckets() && static_cast<size_t>(b) < weights.size(); ++b) {
    load[static_cast<size_t>(table.shard_of_bucket[static_cast<size_t>(b)])] +=
        weights[static_cast<size_t>(b)];
  }
  return load;
}

BucketTable rescale(const BucketTable& from, int32_t shards, std::span<const double> weights) {
  if (shards <= 0) throw std::invalid_argument("rescale needs at least one shard");
  if (const std::string problem = problemWith(from); !problem.empty()) {
    throw std::invalid_argument("rescale of an invalid table: " + problem);
  }
  const std::vector<double> w = effectiveWeights(weights, from.buckets());
  if (shards == from.shards) return from;
  return shards < from.shards ? shrink(from, shards, w) : grow(from, shards, w);
}

}  // namespace shardscaler::resharding
