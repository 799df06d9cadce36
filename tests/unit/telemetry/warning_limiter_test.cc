// WarningLimiter on a ManualClock: a burst per kind, then one line per refill period, each line
// after a quiet spell carrying how many were held back; kinds apart; a bounded number of kinds.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/telemetry/warning_limiter.h"

namespace shardscaler::telemetry {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class WarningLimiterTest : public ::testing::Test {
 protected:
  std::shared_ptr<k8s::ManualClock> clock_ = std::make_shared<k8s::ManualClock>();
  k8s::ManualClock* time_ = clock_.get();
  WarningLimiter limiter_{clock_, {.burst = 3, .refill = seconds(10), .max_kinds = 4}};
};

TEST_F(WarningLimiterTest, ABurstPassesThenTheRestIsCountedNotLogged) {
  for (int i = 0; i < 3; ++i) {
    const auto d = limiter_.admit("denied/ActiveShard");
    EXPECT_TRUE(d.log) << i;
    EXPECT_EQ(d.suppressed, 0u);
  }
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(limiter_.admit("denied/ActiveShard").log);
  time_->advance(seconds(10));
  const auto next = limiter_.admit("denied/ActiveShard");
  EXPECT_TRUE(next.log);
  EXPECT_EQ(next.suppressed, 1000u);
  EXPECT_FALSE(limiter_.admit("denied/ActiveShard").log);
  time_->advance(milliseconds(9999));
  EXPECT_FALSE(limiter_.admit("denied/ActiveShard").log);
  time_->advance(milliseconds(1));
  const auto after = limiter_.admit("denied/ActiveShard");
  EXPECT_TRUE(after.log);
  EXPECT_EQ(after.suppressed, 2u);
}

TEST_F(WarningLimiterTest, KindsHaveBucketsOfTheirOwn) {
  for (int i = 0; i < 10; ++i) limiter_.admit("a");
  EXPECT_FALSE(limiter_.admit("a").log);
  EXPECT_TRUE(limiter_.admit("b").log);
}

TEST_F(WarningLimiterTest, ManyKindsShareOneBucketBeyondTheBound) {
  // Three kinds of their own, then everything else is "other": a client inventing kinds gets
  // one bucket, not one each.
  EXPECT_TRUE(limiter_.admit("k1").log);
  EXPECT_TRUE(limiter_.admit("k2").log);
  EXPECT_TRUE(limiter_.admit("k3").log);
  int logged = 0;
  for (int i = 0; i < 100; ++i) logged += limiter_.admit("new-" + std::to_string(i)).log ? 1 : 0;
  EXPECT_EQ(logged, 3);
}

TEST_F(WarningLimiterTest, AQuietKindRefillsOnlyUpToItsBurst) {
  for (int i = 0; i < 3; ++i) limiter_.admit("a");
  time_->advance(std::chrono::hours(1));
  int logged = 0;
  for (int i = 0; i < 10; ++i) logged += limiter_.admit("a").log ? 1 : 0;
  EXPECT_EQ(logged, 3);
}

}  // namespace
}  // namespace shardscaler::telemetry
