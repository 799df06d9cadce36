// Value syntaxes of the options: Go durations and listener addresses.
#include <gtest/gtest.h>

#include <chrono>

#include "shardscaler/app/run_options.h"

namespace shardscaler::app {
namespace {

using namespace std::chrono_literals;

std::chrono::nanoseconds duration(std::string_view s) {
  auto d = parseGoDuration(s);
  EXPECT_TRUE(d) << s << ": " << (d ? "" : d.error());
  return d.value_or(-1ns);
}

TEST(OptionsValuesTest, GoDurations) {
  EXPECT_EQ(duration("0"), 0ns);
  EXPECT_EQ(duration("0s"), 0ns);
  EXPECT_EQ(duration("10s"), 10s);
  EXPECT_EQ(duration("1m30s"), 90s);
  EXPECT_EQ(duration("1h2m3s4ms5us6ns"), 1h + 2min + 3s + 4ms + 5us + 6ns);
  EXPECT_EQ(duration("1.5h"), 90min);
  EXPECT_EQ(duration(".5s"), 500ms);
  EXPECT_EQ(duration("1.s"), 1s);
  EXPECT_EQ(duration("300ms"), 300ms);
  EXPECT_EQ(duration("2\xC2\xB5s"), 2us);
  EXPECT_EQ(duration("+5s"), 5s);
  EXPECT_EQ(duration("0.000000001s"), 1ns);
  EXPECT_EQ(duration("1.0000000019s"), 1s + 1ns);  // digits beyond nanoseconds are dropped
  EXPECT_EQ(duration("2562047h"), 2562047h);
}

TEST(OptionsValuesTest, BadGoDurations) {
  const std::string syntax = " (use Go syntax such as 10s, 1m30s or 250ms)";
  EXPECT_EQ(parseGoDuration("").error(), "\"\" is not a duration" + syntax);
  EXPECT_EQ(parseGoDuration("s").error(), "\"s\" is not a duration" + syntax);
  EXPECT_EQ(parseGoDuration("10").error(), "\"10\" is not a duration: missing unit" + syntax);
  EXPECT_EQ(parseGoDuration("1m30").error(), "\"1m30\" is not a duration: missing unit" + syntax);
  EXPECT_EQ(parseGoDuration("3d").error(),
            "\"3d\" is not a duration: unknown unit \"d\", use ns, us, ms, s, m or h" + syntax);
  EXPECT_EQ(parseGoDuration("-1s").error(), "\"-1s\" is negative");
  EXPECT_EQ(parseGoDuration("9999999999h").error(), "\"9999999999h\" is too large");
  EXPECT_EQ(parseGoDuration("2562048h").error(), "\"2562048h\" is too large");
  EXPECT_EQ(parseGoDuration("99999999999999999999s").error(),
            "\"99999999999999999999s\" is too large");
}

TEST(OptionsValuesTest, FormatsLikeGo) {
  EXPECT_EQ(formatGoDuration(0ns), "0s");
  EXPECT_EQ(formatGoDuration(15s), "15s");
  EXPECT_EQ(formatGoDuration(90s), "1m30s");
  EXPECT_EQ(formatGoDuration(1h), "1h0m0s");
  EXPECT_EQ(formatGoDuration(1500ms), "1.5s");
  EXPECT_EQ(formatGoDuration(250ms), "250ms");
  EXPECT_EQ(formatGoDuration(1500us), "1.5ms");
  EXPECT_EQ(formatGoDuration(7ns), "7ns");
  EXPECT_EQ(formatGoDuration(-2s), "-2s");
  for (std::chrono::nanoseconds d : {1ns, 999ns, 1us + 1ns, 1000000ns * 59000, 61000000000ns,
                                     3601000000000ns, 90000001000000ns}) {
    EXPECT_EQ(duration(formatGoDuration(d)), d) << formatGoDuration(d);
  }
}

TEST(OptionsValuesTest, BindAddresses) {
  EXPECT_EQ(parseBindAddress(":8080").value(), (BindAddress{"", 8080}));
  EXPECT_EQ(parseBindAddress("127.0.0.1:0").value(), (BindAddress{"127.0.0.1", 0}));
  EXPECT_EQ(parseBindAddress("localhost:9090").value(), (BindAddress{"localhost", 9090}));
  EXPECT_EQ(parseBindAddress("[::1]:65535").value(), (BindAddress{"::1", 65535}));
  EXPECT_EQ(parseBindAddress("[::]:80").value().toString(), "[::]:80");

  const std::string e = "; e.g. :8080 or 127.0.0.1:0)";
  EXPECT_EQ(parseBindAddress("").error(), "\"\" is not host:port (missing port" + e);
  EXPECT_EQ(parseBindAddress("1.2.3.4").error(), "\"1.2.3.4\" is not host:port (missing port" + e);
  EXPECT_EQ(parseBindAddress("::1:80").error(),
            "\"::1:80\" is not host:port (IPv6 hosts go in brackets" + e);
  EXPECT_EQ(parseBindAddress("[::1]").error(), "\"[::1]\" is not host:port (missing port" + e);
  EXPECT_EQ(parseBindAddress("[::1:80").error(), "\"[::1:80\" is not host:port (missing ']'" + e);
  EXPECT_EQ(parseBindAddress(":65536").error(),
            "\":65536\" is not host:port (port 65536 is out of range 0-65535" + e);
  EXPECT_EQ(parseBindAddress(":").error(), "\":\" is not host:port (port \"\" is not a number" + e);
  EXPECT_EQ(parseBindAddress("a b:1").error(), "\"a b:1\" is not host:port (bad host" + e);
}

}  // namespace
}  // namespace shardscaler::app
