// The property tests' rapidcheck driver: `cases` cases from a fixed seed, so that every run checks
// the same ones; RC_PARAMS (e.g. "seed=7 max_success=100000") explores others. A failure is the
// current GoogleTest test's, with the smallest case rapidcheck shrank it to. Header-only: a test
// that includes it links rapidcheck itself.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <rapidcheck.h>

namespace shardscaler::test_kit {

template <typename Property>
void checkProperty(int cases, uint64_t seed, Property property) {
  rc::detail::TestParams params;
  const char* env = std::getenv("RC_PARAMS");
  if (env != nullptr && *env != '\0') {
    params = rc::detail::configuration().testParams;
  } else {
    params.seed = seed;
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

}  // namespace shardscaler::test_kit
