// Log lines: one event per line, JSON that parses, key=value fields, level filtering.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "shardscaler/base/log.h"
#include "shardscaler/base/log_context.h"

namespace shardscaler::base {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

class LoggingFormatTest : public ::testing::Test {
 protected:
  std::shared_ptr<spdlog::logger> logger(LogLevel level, LogFormat format) {
    return makeLogger("", level, format, std::make_shared<spdlog::sinks::ostream_sink_mt>(out_));
  }
  std::vector<std::string> lines() const {
    std::vector<std::string> result;
    std::istringstream in(out_.str());
    for (std::string line; std::getline(in, line);) result.push_back(line);
    return result;
  }

  std::ostringstream out_;
};

TEST_F(LoggingFormatTest, TextLineHasTimestampLevelMessageAndFields) {
  auto log = logger(LogLevel::Info, LogFormat::Text);
  logEvent(*log, LogLevel::Info, "reconciled",
           {{"key", "monitoring/main"}, {"reconcile_id", 42}, {"ok", true}, {"note", "two words"}});
  const auto l = lines();
  ASSERT_EQ(l.size(), 1u);
  EXPECT_THAT(l[0],
              MatchesRegex("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z "
                           "INFO  reconciled key=monitoring/main reconcile_id=42 ok=true "
                           "note=\"two words\""));
}

TEST_F(LoggingFormatTest, JsonLineParsesWithTsLevelMsgAndFields) {
  auto log = logger(LogLevel::Debug, LogFormat::Json);
  logEvent(*log, LogLevel::Warn, "query \"failed\"\nretrying",
           {{"key", "monitoring/main"},
            {"reconcile_id", 7},
            {"rate", 1.5},
            {"nan", std::numeric_limits<double>::quiet_NaN()},
            {"bytes", std::string_view("bad \xff utf8 \x01 ctl")},
            {"msg", "shadow"}});
  const auto l = lines();
  ASSERT_EQ(l.size(), 1u);
  const auto j = nlohmann::json::parse(l[0]);
  EXPECT_EQ(j["level"], "warn");
  EXPECT_EQ(j["msg"], "query \"failed\"\nretrying");
  EXPECT_THAT(j["ts"].get<std::string>(), MatchesRegex("[0-9-]{10}T[0-9:]{8}\\.[0-9]{3}Z"));
  EXPECT_EQ(j["key"], "monitoring/main");
  EXPECT_EQ(j["reconcile_id"], 7);
  EXPECT_EQ(j["rate"], 1.5);
  EXPECT_EQ(j["nan"], "NaN");
  EXPECT_EQ(j["bytes"], "bad \xEF\xBF\xBD utf8 \x01 ctl");
  EXPECT_EQ(j["field_msg"], "shadow");
}

TEST_F(LoggingFormatTest, PlainSpdlogCallsFollowTheFormatWithoutFields) {
  auto log = logger(LogLevel::Info, LogFormat::Json);
  log->info("plain {} message", 1);
  logEvent(*log, LogLevel::Info, "with", {{"a", 1}});
  log->info("plain again");
  const auto l = lines();
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(nlohmann::json::parse(l[0]).size(), 3u);  // ts, level, msg
  EXPECT_EQ(nlohmann::json::parse(l[1])["a"], 1);
  EXPECT_FALSE(nlohmann::json::parse(l[2]).contains("a"));
}

TEST_F(LoggingFormatTest, TextKeepsOneEventPerLine) {
  auto log = logger(LogLevel::Info, LogFormat::Text);
  logEvent(*log, LogLevel::Error, "line1\nline2\r\x02", {{"err", "a\nb=c \"q\""}, {"empty", ""}});
  const auto l = lines();
  ASSERT_EQ(l.size(), 1u);
  EXPECT_THAT(l[0],
              HasSubstr("ERROR line1\\nline2\\r\\u0002 err=\"a\\nb=c \\\"q\\\"\" empty=\"\""));
}

TEST_F(LoggingFormatTest, TextMessageKeepsQuotesAndValuesReplaceBadUtf8) {
  auto log = logger(LogLevel::Info, LogFormat::Text);
  logEvent(*log, LogLevel::Warn, R"(kubeconfig "a\b" unreadable)",
           {{"bytes", std::string_view("bad \xff")}, {"path", "/tmp/x"}});
  const auto l = lines();
  ASSERT_EQ(l.size(), 1u);
  EXPECT_THAT(l[0], HasSubstr(R"(WARN  kubeconfig "a\b" unreadable bytes="bad )"
                              "\xEF\xBF\xBD"
                              R"(" path=/tmp/x)"));
}

TEST_F(LoggingFormatTest, LevelFiltering) {
  auto log = logger(LogLevel::Warn, LogFormat::Json);
  logEvent(*log, LogLevel::Debug, "d");
  logEvent(*log, LogLevel::Info, "i");
  logEvent(*log, LogLevel::Warn, "w");
  logEvent(*log, LogLevel::Error, "e");
  const auto l = lines();
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(l[0])["msg"], "w");
  EXPECT_EQ(nlohmann::json::parse(l[1])["level"], "error");
}

TEST_F(LoggingFormatTest, ContextCarriesFieldsInOrder) {
  auto log = logger(LogLevel::Debug, LogFormat::Text);
  const LogContext ctx({{"key", "ns/name"}, {"reconcile_id", 3}}, log);
  ctx.with({{"step", "detach"}}).info("retained shard", {{"shard", 4}});
  ctx.debug("done");
  const auto l = lines();
  ASSERT_EQ(l.size(), 2u);
  EXPECT_THAT(l[0],
              HasSubstr("INFO  retained shard key=ns/name reconcile_id=3 step=detach shard=4"));
  EXPECT_THAT(l[1], HasSubstr("DEBUG done key=ns/name reconcile_id=3"));
}

TEST_F(LoggingFormatTest, ConcurrentEventsNeverMixFields) {
  auto log = logger(LogLevel::Info, LogFormat::Json);
  constexpr int kThreads = 4;
  constexpr int kEvents = 200;
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEvents; ++i) {
        logEvent(*log, LogLevel::Info, "event " + std::to_string(t), {{"thread", t}, {"i", i}});
      }
    });
  }
  for (auto& th : threads) th.join();
  const auto l = lines();
  ASSERT_EQ(l.size(), static_cast<size_t>(kThreads * kEvents));
  for (const auto& line : l) {
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["msg"], "event " + std::to_string(j["thread"].get<int>()));
  }
}

TEST(LoggingParseTest, LevelsAndFormats) {
  EXPECT_EQ(parseLogLevel("warning").value(), LogLevel::Warn);
  EXPECT_EQ(parseLogLevel("Info").error(), "\"Info\" is not one of debug, info, warn, error");
  EXPECT_EQ(parseLogFormat("json").value(), LogFormat::Json);
  EXPECT_EQ(toString(LogLevel::Error), "error");
}

}  // namespace
}  // namespace shardscaler::base
