// Rate limiters: per-key exponential sequence and cap, token bucket, and the default
// controller limiter (max of both).
#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "shardscaler/k8s_client/item_exponential_rate_limiter.h"
#include "shardscaler/k8s_client/rate_limiter.h"
#include "shardscaler/k8s_client/token_bucket_rate_limiter.h"

namespace shardscaler::k8s {
namespace {

using namespace std::chrono_literals;

TEST(ItemExponentialRateLimiterTest, DoublesFromFiveMillisecondsToAThousandSeconds) {
  ItemExponentialRateLimiter limiter;
  std::chrono::nanoseconds expected = 5ms;
  for (int i = 0; i < 18; ++i) {
    EXPECT_EQ(limiter.when("a"), expected) << "failure " << i;
    expected *= 2;
  }
  // 5 ms * 2^18 = 1310.72 s: capped.
  EXPECT_EQ(limiter.when("a"), 1000s);
  for (int i = 0; i < 2000; ++i) limiter.when("a");  // far past any integer overflow
  EXPECT_EQ(limiter.when("a"), 1000s);
  EXPECT_EQ(limiter.numRequeues("a"), 2020);
}

TEST(ItemExponentialRateLimiterTest, KeysAreIndependentAndForgetResets) {
  ItemExponentialRateLimiter limiter(1ms, 1s);
  EXPECT_EQ(limiter.when("a"), 1ms);
  EXPECT_EQ(limiter.when("a"), 2ms);
  EXPECT_EQ(limiter.when("b"), 1ms);
  EXPECT_EQ(limiter.numRequeues("a"), 2);
  limiter.forget("a");
  EXPECT_EQ(limiter.numRequeues("a"), 0);
  EXPECT_EQ(limiter.when("a"), 1ms);
  EXPECT_EQ(limiter.numRequeues("b"), 1);
}

TEST(TokenBucketRateLimiterTest, BurstIsFreeThenOneTokenPerTenthOfASecond) {
  ManualClock clock;
  TokenBucketRateLimiter limiter(10.0, 100, clock);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(limiter.when("k" + std::to_string(i)), 0ns);
  EXPECT_EQ(limiter.when("x"), 100ms);
  EXPECT_EQ(limiter.when("y"), 200ms);
  // One second refills 10 tokens; 2 were borrowed, so 8 are free again.
  clock.advance(1s);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(limiter.when("z"), 0ns) << i;
  EXPECT_EQ(limiter.when("z"), 100ms);
  // The bucket never holds more than the burst.
  clock.advance(1h);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(limiter.when("w"), 0ns);
  EXPECT_EQ(limiter.when("w"), 100ms);
  EXPECT_EQ(limiter.numRequeues("w"), 0);
}

TEST(TokenBucketRateLimiterTest, RejectsNonsense) {
  ManualClock clock;
  EXPECT_THROW(TokenBucketRateLimiter(0, 1, clock), std::invalid_argument);
  EXPECT_THROW(TokenBucketRateLimiter(1, 0, clock), std::invalid_argument);
}

TEST(DefaultControllerRateLimiterTest, TakesTheLongerOfBackoffAndBucket) {
  ManualClock clock;
  auto limiter = defaultControllerRateLimiter(clock);
  EXPECT_EQ(limiter->when("a"), 5ms);
  EXPECT_EQ(limiter->when("a"), 10ms);
  EXPECT_EQ(limiter->numRequeues("a"), 2);
  for (int i = 0; i < 98; ++i) limiter->when("k" + std::to_string(i));  // bucket now empty
  EXPECT_EQ(limiter->when("fresh"), 100ms) << "bucket wins over a first 5 ms backoff";
  EXPECT_EQ(limiter->when("a"), 200ms) << "bucket wins over the key's 20 ms";
  limiter->forget("a");
  EXPECT_EQ(limiter->numRequeues("a"), 0);
  clock.advance(1h);
  EXPECT_EQ(limiter->when("a"), 5ms);
}

}  // namespace
}  // namespace shardscaler::k8s
