#include "shardscaler/planner/deadline.h"

#include <gtest/gtest.h>

#include "fixtures.h"

namespace shardscaler::planner {
namespace {

using namespace std::chrono;
using testing::fixedNow;
using testing::rfc3339;

TEST(Rfc3339, FormatsUtcWithoutFractionWhenWhole) {
  EXPECT_EQ(rfc3339(fixedNow()), "2026-11-22T10:00:00Z");
  EXPECT_EQ(rfc3339(fixedNow() + milliseconds(250)), "2026-11-22T10:00:00.25Z");
  EXPECT_EQ(rfc3339(system_clock::time_point{}), "1970-01-01T00:00:00Z");
  EXPECT_EQ(rfc3339(sys_days{year{1969} / December / 31} + hours(23) + minutes(59) + seconds(59) +
                    milliseconds(500)),
            "1969-12-31T23:59:59.5Z");
}

TEST(Rfc3339, ParsesWhatGoTimeParseAccepts) {
  const auto expect = [](const char* text, const char* utc) {
    auto t = k8s::parseRfc3339(text);
    ASSERT_TRUE(t.has_value()) << text << ": " << t.error();
    EXPECT_EQ(k8s::formatRfc3339(*t), utc) << text;
  };
  expect("2026-11-25T10:00:00Z", "2026-11-25T10:00:00Z");
  expect("2026-11-25T12:30:00+02:30", "2026-11-25T10:00:00Z");
  expect("2026-11-25T00:00:00-05:00", "2026-11-25T05:00:00Z");
  expect("2026-11-25T10:00:00.123456789Z", "2026-11-25T10:00:00.123456789Z");
  expect("2026-11-25T10:00:00.1234567891Z", "2026-11-25T10:00:00.123456789Z");
  expect("2024-02-29T00:00:00Z", "2024-02-29T00:00:00Z");
  expect("9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z");
  expect("0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z");
}

TEST(Rfc3339, RejectsEverythingElse) {
  for (const char* text : {"",
                           "tomorrow",
                           "2026-11-25",
                           "2026-11-25T10:00:00",
                           "2026-11-25 10:00:00Z",
                           "2026-11-25t10:00:00Z",
                           "2026-11-25T10:00:00z",
                           "2026-13-01T00:00:00Z",
                           "2023-02-29T00:00:00Z",
                           "2026-04-31T00:00:00Z",
                           "2026-11-25T24:00:00Z",
                           "2026-11-25T10:60:00Z",
                           "2026-11-25T10:00:60Z",
                           "2026-11-25T10:00:00.Z",
                           "2026-11-25T10:00:00+24:00",
                           "2026-11-25T10:00:00+0200",
                           "2026-11-25T10:00:00Zjunk",
                           "26-11-25T10:00:00Z",
                           "+2026-11-25T10:00:00Z",
                           "1764064800"}) {
    EXPECT_FALSE(k8s::parseRfc3339(text).has_value()) << text;
  }
}

TEST(DeletionDeadline, ZeroTimeMeansNever) {
  for (const char* text : {"0001-01-01T00:00:00Z", "0001-01-01T02:00:00+02:00"}) {
    auto d = parseDeletionTimestamp(text);
    ASSERT_TRUE(d.has_value()) << text;
    EXPECT_TRUE(d->isNever()) << text;
    EXPECT_EQ(d->toAnnotation(), "0001-01-01T00:00:00Z");
    EXPECT_FALSE(d->expiredAt(sys_days{year{2262} / 1 / 1}));
    EXPECT_FALSE(d->timeUntilExpiry(fixedNow()).has_value());
  }
  // One nanosecond later is a real (long past) deadline.
  auto d = parseDeletionTimestamp("0001-01-01T00:00:00.000000001Z");
  ASSERT_TRUE(d.has_value());
  EXPECT_FALSE(d->isNever());
  EXPECT_TRUE(d->expiredAt(fixedNow()));
}

TEST(DeletionDeadline, ExpiresStrictlyAfterTheDeadline) {
  const auto at = fixedNow();
  const auto d = DeletionDeadline::at(Timestamp::fromTimePoint(at));
  EXPECT_FALSE(d.expiredAt(at - seconds(1)));  // before
  EXPECT_FALSE(d.expiredAt(at));               // at
  EXPECT_TRUE(d.expiredAt(at + nanoseconds(1)));
  EXPECT_TRUE(d.expiredAt(at + seconds(1)));  // after
  EXPECT_EQ(d.timeUntilExpiry(at - seconds(10)), seconds(11));
  EXPECT_EQ(d.timeUntilExpiry(at - milliseconds(10'500)), seconds(11));
  EXPECT_EQ(d.timeUntilExpiry(at), seconds(1));
  EXPECT_FALSE(d.timeUntilExpiry(at + seconds(1)).has_value());
  // The requeue time is enough: at now + timeUntilExpiry the deadline has passed.
  for (auto now : {at - seconds(10), at - milliseconds(10'500), at}) {
    EXPECT_TRUE(d.expiredAt(now + *d.timeUntilExpiry(now)));
    EXPECT_FALSE(d.expiredAt(now + *d.timeUntilExpiry(now) - seconds(1)));
  }
}

TEST(DeadlineAfter, AddsThePeriodAndTruncatesToSeconds) {
  const auto now = fixedNow() + milliseconds(999);
  EXPECT_EQ(deadlineAfter(now, hours(72)).toAnnotation(), "2026-11-25T10:00:00Z");
  EXPECT_EQ(deadlineAfter(now, milliseconds(1)).toAnnotation(), "2026-11-22T10:00:01Z");
  EXPECT_EQ(deadlineAfter(now, std::nullopt).toAnnotation(), "0001-01-01T00:00:00Z");
  // A period of 0 is "never", as in the operator (gracePeriod > 0 only).
  EXPECT_TRUE(deadlineAfter(now, nanoseconds(0)).isNever());
  // The longest Prometheus duration goes past what a nanosecond time_point can hold.
  const auto far = deadlineAfter(now, nanoseconds(INT64_MAX));
  EXPECT_EQ(far.toAnnotation(), "2319-03-04T09:47:17Z");
  EXPECT_FALSE(far.expiredAt(sys_days{year{2262} / 1 / 1}));
}

TEST(DeadlineAfter, RoundTripsThroughTheAnnotation) {
  const auto d = deadlineAfter(fixedNow(), hours(24));
  auto back = parseDeletionTimestamp(d.toAnnotation());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, d);
}

// Found by tests/fuzz/deletion_timestamp_fuzz.cc: RFC3339 reaches year 0000, a nanosecond
// system_clock only 1677..2262. Out of that range an annotation time is unreadable, not UB.
TEST(AnnotationTime, OutsideTheClocksRangeIsUnreadable) {
  for (const std::string text : {"0001-01-01T00:00:00Z", "1677-01-01T00:00:00Z",
                                 "2263-01-01T00:00:00Z", "9999-12-31T23:59:59Z"}) {
    EXPECT_EQ(parseAnnotationTime(&text), std::nullopt) << text;
  }
  const std::string ok = "2026-11-25T10:00:00.250Z";
  auto t = parseAnnotationTime(&ok);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(duration_cast<milliseconds>(t->time_since_epoch()).count() % 1000, 250);
}

}  // namespace
}  // namespace shardscaler::planner
