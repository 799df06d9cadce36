// On a logger not made by makeLogger (a process that never configured the log, e.g. the
// operator emulator), an event's fields are appended to its message as "k=v" text, quoted where
// a value is not one token: a field is never lost.
#include <memory>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "shardscaler/base/log.h"
#include "shardscaler/base/log_context.h"

namespace shardscaler::base {
namespace {

class PlainLoggerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto logger = std::make_shared<spdlog::logger>(
        "", std::make_shared<spdlog::sinks::ostream_sink_st>(out_));
    logger->set_pattern("%l %v");
    logger->set_level(spdlog::level::info);
    spdlog::set_default_logger(logger);
  }
  void TearDown() override { spdlog::set_default_logger(saved_); }

  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> saved_ = spdlog::default_logger();
};

TEST_F(PlainLoggerTest, FieldsAreWrittenAsKeyValueText) {
  logEvent(LogLevel::Warn, "lease update failed",
           {{"lease", "ns/l"}, {"error", "Conflict (409): \"l\" changed\nagain"}, {"n", 2}});
  logEvent(LogLevel::Debug, "below the level", {{"k", "v"}});
  logEvent(LogLevel::Info, "lease conflict", {{"empty", ""}});
  EXPECT_EQ(out_.str(),
            "warning lease update failed lease=ns/l error=\"Conflict (409): \\\"l\\\" "
            "changed\\nagain\" n=2\n"
            "info lease conflict empty=\"\"\n");
}

TEST_F(PlainLoggerTest, AContextsFieldsComeBeforeTheCallsFields) {
  const LogContext ctx({{"key", "ns/name"}, {"reconcile_id", 3}});
  ctx.info("retained shard", {{"shard", 4}});
  EXPECT_EQ(out_.str(), "info retained shard key=ns/name reconcile_id=3 shard=4\n");
}

}  // namespace
}  // namespace shardscaler::base
