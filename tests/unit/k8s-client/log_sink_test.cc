// k8s-client's log events: fields reach an installed sink apart from the message, and without a
// sink they are written as "<msg> k=v" through spdlog, quoted where a value is not one token.
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "shardscaler/k8s_client/log.h"

namespace shardscaler::k8s {
namespace {

struct Seen {
  LogLevel level;
  std::string msg;
  std::vector<std::string> fields;  // "key=value" with "raw:" before raw values
};

class LogSinkTest : public ::testing::Test {
 protected:
  void TearDown() override {
    setLogSink({});
    spdlog::set_default_logger(saved_);
  }
  std::shared_ptr<spdlog::logger> saved_ = spdlog::default_logger();
};

TEST_F(LogSinkTest, AnInstalledSinkGetsTheFieldsApartFromTheMessage) {
  std::vector<Seen> seen;
  setLogSink([&](LogLevel level, std::string_view msg, std::span<const LogField> fields) {
    Seen s{level, std::string(msg), {}};
    for (const LogField& f : fields) {
      s.fields.push_back(f.key() + "=" + (f.raw() ? "raw:" : "") + f.value());
    }
    seen.push_back(std::move(s));
  });
  log(LogLevel::Warn, "leader lost",
      {{"lease", "ns/l"}, {"reason", "held_by_other"}, {"transitions", 3}, {"leading", false}});
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].level, LogLevel::Warn);
  EXPECT_EQ(seen[0].msg, "leader lost");
  EXPECT_EQ(seen[0].fields, (std::vector<std::string>{"lease=ns/l", "reason=held_by_other",
                                                      "transitions=raw:3", "leading=raw:false"}));
}

TEST_F(LogSinkTest, WithoutASinkFieldsAreWrittenAsKeyValueText) {
  std::ostringstream out;
  auto logger =
      std::make_shared<spdlog::logger>("", std::make_shared<spdlog::sinks::ostream_sink_st>(out));
  logger->set_pattern("%l %v");
  logger->set_level(spdlog::level::info);
  spdlog::set_default_logger(logger);
  log(LogLevel::Warn, "lease update failed",
      {{"lease", "ns/l"}, {"error", "Conflict (409): \"l\" changed\nagain"}, {"n", 2}});
  log(LogLevel::Debug, "below the level", {{"k", "v"}});
  log(LogLevel::Info, "lease conflict", {{"empty", ""}});
  EXPECT_EQ(out.str(),
            "warning lease update failed lease=ns/l error=\"Conflict (409): \\\"l\\\" "
            "changed\\nagain\" n=2\n"
            "info lease conflict empty=\"\"\n");
}

}  // namespace
}  // namespace shardscaler::k8s
