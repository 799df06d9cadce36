// Prometheus's `hashmod` relabel action, bit for bit: the target label gets the big-endian
// uint64 of the last 8 bytes of the MD5 of the source value, modulo `modulus`. Pure; must never
// disagree with a real Prometheus (tests/unit/resharding holds it to values one computed).
#pragma once

#include <cstdint>
#include <string_view>

namespace shardscaler::resharding {

// `modulus` must be > 0 (Prometheus refuses a hashmod rule without one).
uint64_t hashmod(std::string_view value, uint64_t modulus);

}  // namespace shardscaler::resharding
