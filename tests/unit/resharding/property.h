// The resharding unit tests' rapidcheck driver: a fixed seed, so that every run checks the same
// cases; RC_PARAMS (e.g. "seed=7 max_success=100000") explores others.
#pragma once

#include <cstdlib>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <rapidcheck.h>

namespace shardscaler::resharding::testing {

// Full range at every size: rapidcheck narrows inRange for its early, small cases.
inline int uniform(int lo, int hi) { return *rc::gen::resize(100, rc::gen::inRange(lo, hi + 1)); }

template <typename Property>
void checkProperty(int cases, Property property) {
  rc::detail::TestParams params;
  const char* env = std::getenv("RC_PARAMS");
  if (env != nullptr && *env != '\0') {
    params = rc::detail::configuration().testParams;
  } else {
    params.seed = 20261128;
    params.maxSuccess = cases;
  }
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  const auto result = rc::detail::checkTestable(std::move(property), metadata, params);
  if (!result.template is<rc::detail::SuccessResult>()) {
    std::ostringstream message;
    rc::detail::printResultMessage(result, message);
    ADD_FAILURE() << message.str();
  }
}

}  // namespace shardscaler::resharding::testing
