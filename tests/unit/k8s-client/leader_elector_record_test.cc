// Lease spec <-> LeaderElectionRecord, and Time/MicroTime formatting and parsing.
#include <chrono>

#include <gtest/gtest.h>

#include "shardscaler/k8s_client/leader_election_record.h"

namespace shardscaler::k8s {
namespace {

using namespace std::chrono;
using namespace std::chrono_literals;

TEST(MicroTimeTest, FormatsUtcWithMicroseconds) {
  Clock::SystemTime t = sys_days(2024y / March / 5) + 7h + 8min + 9s + 123456us + 789ns;
  EXPECT_EQ(formatMicroTime(t), "2024-03-05T07:08:09.123456Z");
  EXPECT_EQ(formatMicroTime(Clock::SystemTime{}), "1970-01-01T00:00:00.000000Z");
}

TEST(MetaTimeTest, FormatsUtcToTheWholeSecondAndReadsItBack) {
  Clock::SystemTime t = sys_days(2026y / November / 25) + 10h + 2min + 3s + 999999us;
  EXPECT_EQ(formatTime(t), "2026-11-25T10:02:03Z");
  EXPECT_EQ(formatTime(Clock::SystemTime{}), "1970-01-01T00:00:00Z");
  EXPECT_EQ(formatTime(sys_days(1969y / December / 31) + 23h + 59min + 59s + 500ms),
            "1969-12-31T23:59:59Z");
  auto back = parseMicroTime(formatTime(t));
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, floor<seconds>(t));
}

TEST(MicroTimeTest, ParsesWhatTheApiServerSends) {
  auto t = parseMicroTime("2024-03-05T07:08:09.123456Z");
  ASSERT_TRUE(t);
  EXPECT_EQ(*t, sys_days(2024y / March / 5) + 7h + 8min + 9s + 123456us);
  auto whole = parseMicroTime("2024-03-05T07:08:09Z");
  ASSERT_TRUE(whole);
  EXPECT_EQ(*whole, sys_days(2024y / March / 5) + 7h + 8min + 9s);
  auto offset = parseMicroTime("2024-03-05T09:08:09.5+02:00");
  ASSERT_TRUE(offset);
  EXPECT_EQ(*offset, sys_days(2024y / March / 5) + 7h + 8min + 9s + 500ms);
}

TEST(MicroTimeTest, RejectsGarbage) {
  for (const char* bad :
       {"", "yesterday", "2024-03-05", "2024-13-05T07:08:09Z", "2024-03-05T07:08:09",
        "2024-03-05T07:08:09.Z", "2024-03-05T07:08:09Zx"}) {
    auto parsed = parseMicroTime(bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_TRUE(parsed.error().is(ErrorKind::Decode));
  }
}

TEST(MicroTimeTest, AnInstantAClockCannotHoldIsADecodeErrorNotAnOverflow) {
  // RFC 3339 reaches back to year 0000 (Go's zero time is 0001-01-01); a nanosecond
  // system_clock::time_point spans 1677..2262.
  for (const char* far : {"0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"}) {
    auto parsed = parseMicroTime(far);
    ASSERT_FALSE(parsed) << far;
    EXPECT_TRUE(parsed.error().is(ErrorKind::Decode));
    EXPECT_NE(parsed.error().message.find(far), std::string::npos) << parsed.error().message;
  }
}

TEST(MetaTimeTest, WholeSecondsRoundDownAlsoBeforeTheEpoch) {
  EXPECT_EQ(formatTime(sys_days(2024y / March / 5) + 999ms), "2024-03-05T00:00:00Z");
  EXPECT_EQ(formatTime(Clock::SystemTime{} - 1ms), "1969-12-31T23:59:59Z");
  EXPECT_EQ(formatMicroTime(Clock::SystemTime{} - 1us), "1969-12-31T23:59:59.999999Z");
}

TEST(LeaseSpecTest, RoundTrips) {
  LeaderElectionRecord record{
      .holder_identity = "pod-1",
      .lease_duration_seconds = 15,
      .acquire_time = sys_days(2024y / March / 5) + 1h,
      .renew_time = sys_days(2024y / March / 5) + 1h + 10s + 1us,
      .leader_transitions = 3,
  };
  auto spec = toLeaseSpec(record);
  EXPECT_EQ(spec["holderIdentity"], "pod-1");
  EXPECT_EQ(spec["renewTime"], "2024-03-05T01:00:10.000001Z");
  auto back = fromLeaseSpec(spec);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, record);
}

TEST(LeaseSpecTest, MissingFieldsAreEmptyAndWrongTypesAreErrors) {
  auto empty = fromLeaseSpec(Json::object());
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->holder_identity, "");
  EXPECT_EQ(empty->lease_duration_seconds, 0);
  EXPECT_TRUE(fromLeaseSpec(Json(nullptr)));
  EXPECT_FALSE(fromLeaseSpec(Json{{"holderIdentity", 5}}));
  EXPECT_FALSE(fromLeaseSpec(Json{{"renewTime", "soon"}}));
  EXPECT_FALSE(fromLeaseSpec(Json::array()));
}

}  // namespace
}  // namespace shardscaler::k8s
