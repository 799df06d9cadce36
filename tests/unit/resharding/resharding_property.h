// The resharding unit tests' rapidcheck driver: a fixed seed, so that every run checks the same
// cases; RC_PARAMS (e.g. "seed=7 max_success=100000") explores others.
#pragma once

#include <utility>

#include <rapidcheck.h>

#include "shardscaler/test_kit/property.h"

namespace shardscaler::resharding::testing {

// Full range at every size: rapidcheck narrows inRange for its early, small cases.
inline int uniform(int lo, int hi) { return *rc::gen::resize(100, rc::gen::inRange(lo, hi + 1)); }

template <typename Property>
void checkProperty(int cases, Property property) {
  test_kit::checkProperty(cases, 20261128, std::move(property));
}

}  // namespace shardscaler::resharding::testing
