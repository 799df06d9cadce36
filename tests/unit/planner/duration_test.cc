#include "shardscaler/planner/duration.h"

#include <gtest/gtest.h>

namespace shardscaler::planner {
namespace {

using std::chrono::nanoseconds;
constexpr int64_t kMs = 1'000'000;
constexpr int64_t kS = 1000 * kMs;
constexpr int64_t kMin = 60 * kS;
constexpr int64_t kH = 60 * kMin;
constexpr int64_t kD = 24 * kH;
constexpr int64_t kW = 7 * kD;
constexpr int64_t kY = 365 * kD;

struct Valid {
  const char* text;
  int64_t nanos;
};

class ValidDuration : public ::testing::TestWithParam<Valid> {};

TEST_P(ValidDuration, Parses) {
  auto d = parsePrometheusDuration(GetParam().text);
  ASSERT_TRUE(d.has_value()) << GetParam().text << ": " << d.error();
  EXPECT_EQ(d->count(), GetParam().nanos) << GetParam().text;
}

INSTANTIATE_TEST_SUITE_P(
    PrometheusGrammar, ValidDuration,
    ::testing::Values(
        Valid{"0", 0}, Valid{"0s", 0}, Valid{"0ms", 0}, Valid{"1ms", kMs}, Valid{"1s", kS},
        Valid{"90s", 90 * kS}, Valid{"5m", 300 * kS}, Valid{"2h", 7200 * kS}, Valid{"3d", 3 * kD},
        Valid{"1w", 7 * kD}, Valid{"1y", 365 * kD}, Valid{"007s", 7 * kS},
        Valid{"1y2w3d4h5m6s7ms", kY + 2 * kW + 3 * kD + 4 * kH + 5 * kMin + 6 * kS + 7 * kMs},
        Valid{"1h30m", 5400 * kS}, Valid{"1d1ms", kD + kMs},
        // 2^63-1 ns is about 292.47 years: the last whole units that fit.
        Valid{"292y", 292 * kY}, Valid{"106751d", 106751 * kD},
        Valid{"9223372036854ms", 9223372036854 * kMs}, Valid{"292y24w", 292 * kY + 24 * kW}));

struct Invalid {
  const char* text;
  const char* error;
};

class InvalidDuration : public ::testing::TestWithParam<Invalid> {};

TEST_P(InvalidDuration, IsRejectedWithPrometheusMessage) {
  auto d = parsePrometheusDuration(GetParam().text);
  ASSERT_FALSE(d.has_value()) << GetParam().text << " parsed as " << d->count();
  EXPECT_EQ(d.error(), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    PrometheusGrammar, InvalidDuration,
    ::testing::Values(Invalid{"", "empty duration string"},
                      Invalid{"1", "not a valid duration string: \"1\""},
                      Invalid{"00", "not a valid duration string: \"00\""},
                      Invalid{"s", "not a valid duration string: \"s\""},
                      Invalid{"-1s", "not a valid duration string: \"-1s\""},
                      Invalid{"1.5h", "unknown unit \".\" in duration \"1.5h\""},
                      Invalid{"1s1m", "not a valid duration string: \"1s1m\""},
                      Invalid{"1m1m", "not a valid duration string: \"1m1m\""},
                      Invalid{"1ms1s", "not a valid duration string: \"1ms1s\""},
                      Invalid{"1d1y", "not a valid duration string: \"1d1y\""},
                      Invalid{"1M", "unknown unit \"M\" in duration \"1M\""},
                      Invalid{"1us", "unknown unit \"us\" in duration \"1us\""},
                      Invalid{"1h ", "unknown unit \"h \" in duration \"1h \""},
                      Invalid{" 1h", "not a valid duration string: \" 1h\""},
                      Invalid{"1hh", "unknown unit \"hh\" in duration \"1hh\""},
                      Invalid{"293y", "duration out of range"},
                      Invalid{"106752d", "duration out of range"},
                      Invalid{"292y25w", "duration out of range"},
                      Invalid{"9223372036855ms", "duration out of range"},
                      Invalid{"18446744073709551616s",
                              "not a valid duration string: \"18446744073709551616s\""}));

TEST(FormatPrometheusDuration, MatchesModelDurationString) {
  EXPECT_EQ(formatPrometheusDuration(nanoseconds(0)), "0s");
  EXPECT_EQ(formatPrometheusDuration(nanoseconds(kMs)), "1ms");
  EXPECT_EQ(formatPrometheusDuration(nanoseconds(kD)), "1d");
  EXPECT_EQ(formatPrometheusDuration(nanoseconds(7 * kD)), "1w");
  EXPECT_EQ(formatPrometheusDuration(nanoseconds(90 * kD)), "90d");  // not 12w6d
  EXPECT_EQ(formatPrometheusDuration(nanoseconds(365 * kD)), "1y");
  EXPECT_EQ(formatPrometheusDuration(nanoseconds(366 * kD)), "366d");  // y only when exact
  EXPECT_EQ(formatPrometheusDuration(nanoseconds(kD + 2 * kH + 3 * kMin + 4 * kS + 5 * kMs)),
            "1d2h3m4s5ms");
  EXPECT_EQ(formatPrometheusDuration(nanoseconds(-90 * kS)), "-1m30s");
}

TEST(FormatPrometheusDuration, RoundTripsThroughParse) {
  for (const char* text : {"1y", "2w", "3d", "4h", "5m", "6s", "7ms", "1d2h3m4s5ms", "53w", "2y"}) {
    auto d = parsePrometheusDuration(text);
    ASSERT_TRUE(d.has_value()) << text;
    EXPECT_EQ(formatPrometheusDuration(*d), text);
  }
}

}  // namespace
}  // namespace shardscaler::planner
