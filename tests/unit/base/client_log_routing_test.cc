// Events with fields gathered at run time (as k8s-client's reflector logs them) reach the
// configured log with their fields as fields and their types kept: numbers and booleans unquoted
// in JSON, strings quoted, the level honoured.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "shardscaler/base/log.h"

namespace shardscaler::base {
namespace {

class ClientLogRoutingTest : public ::testing::Test {
 protected:
  // configureLogging as the service calls it, then its stderr sink swapped for a buffer.
  void configure(LogLevel level, LogFormat format) {
    configureLogging(level, format);
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    sink->set_formatter(makeLogFormatter(format));
    spdlog::default_logger()->sinks().assign({sink});
  }
  void SetUp() override { previous_ = spdlog::default_logger(); }
  void TearDown() override { spdlog::set_default_logger(previous_); }

  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST_F(ClientLogRoutingTest, ClientFieldsArriveAsTypedJsonFields) {
  configure(LogLevel::Info, LogFormat::Json);
  const std::vector<LogField> fields{
      {"resource", "statefulsets"}, {"attempt", 3}, {"ok", false}, {"rate", 2.5}, {"count", "7"}};
  logEvent(LogLevel::Warn, "watch failed", fields);
  const auto line = nlohmann::json::parse(out_.str());
  EXPECT_EQ(line.at("level"), "warn");
  EXPECT_EQ(line.at("msg"), "watch failed");
  EXPECT_EQ(line.at("resource"), "statefulsets");
  EXPECT_EQ(line.at("attempt"), 3);
  EXPECT_EQ(line.at("ok"), false);
  EXPECT_DOUBLE_EQ(line.at("rate").get<double>(), 2.5);
  EXPECT_EQ(line.at("count"), "7") << "a string that looks like a number stays a string";
}

TEST_F(ClientLogRoutingTest, ClientEventsBelowTheLevelAreDropped) {
  configure(LogLevel::Warn, LogFormat::Text);
  logEvent(LogLevel::Info, "lease renewed", {{"holder", "a"}});
  EXPECT_EQ(out_.str(), "");
  logEvent(LogLevel::Error, "lease lost", {{"holder", "a b"}});
  EXPECT_NE(out_.str().find("ERROR lease lost holder=\"a b\""), std::string::npos) << out_.str();
}

TEST_F(ClientLogRoutingTest, NonFiniteNumbersStayStrings) {
  configure(LogLevel::Info, LogFormat::Json);
  logEvent(LogLevel::Info, "rate",
           {{"nan", std::nan("")}, {"inf", std::numeric_limits<double>::infinity()}});
  const auto line = nlohmann::json::parse(out_.str());
  EXPECT_EQ(line.at("nan"), "NaN");
  EXPECT_EQ(line.at("inf"), "+Inf");
}

}  // namespace
}  // namespace shardscaler::base
