// A JSON line stays one valid JSON document whatever bytes a value holds: quotes, backslashes and
// control characters escaped, each ill-formed UTF-8 sequence replaced by U+FFFD, well-formed
// non-ASCII kept.
#include <cstdint>
#include <iterator>
#include <memory>
#include <random>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <nlohmann/json.hpp>

#include "shardscaler/base/log.h"

namespace shardscaler::base {
namespace {

// The JSON line of one event whose only field "v" holds `value`, and the text after "v":.
std::string loggedValue(const std::string& value) {
  std::ostringstream out;
  auto logger = makeLogger("", LogLevel::Info, LogFormat::Json,
                           std::make_shared<spdlog::sinks::ostream_sink_st>(out));
  logEvent(*logger, LogLevel::Info, "m", {{"v", value}});
  std::string line = out.str();
  const std::string marker = ",\"v\":";
  const size_t at = line.rfind(marker);
  if (at == std::string::npos) return line;
  return line.substr(at + marker.size(), line.size() - at - marker.size() - 2);  // "}\n"
}

TEST(JsonEscapingTest, ChosenBytesAreEscapedOrReplaced) {
  EXPECT_EQ(loggedValue("plain"), R"("plain")");
  EXPECT_EQ(loggedValue("q\"b\\s/"), R"("q\"b\\s/")");
  EXPECT_EQ(loggedValue("\b\f\n\r\t\x01\x1f\x7f"), "\"\\b\\f\\n\\r\\t\\u0001\\u001f\x7f\"");
  EXPECT_EQ(loggedValue("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"),
            "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");     // é € 😀 kept
  EXPECT_EQ(loggedValue("\xe2\x82x"), "\"\xEF\xBF\xBDx\"");  // truncated: one U+FFFD
  EXPECT_EQ(loggedValue(std::string("a\0b", 3)), R"("a\u0000b")");
}

TEST(JsonEscapingTest, EveryLineParsesWhateverBytesTheValueHolds) {
  // The bytes where UTF-8's rules change (lead bytes, the edges of the continuation ranges),
  // so that random strings hold well-formed, overlong, truncated and surrogate sequences alike.
  constexpr uint8_t kEdges[] = {0x00, 0x1f, 0x22, 0x41, 0x5c, 0x7f, 0x80, 0x8f, 0x90, 0x9f,
                                0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed,
                                0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff};
  std::mt19937 random(25);  // fixed: the same strings every run
  std::uniform_int_distribution<int> length(0, 12);
  std::uniform_int_distribution<size_t> edge(0, std::size(kEdges) - 1);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int i = 0; i < 20000; ++i) {
    std::string s(static_cast<size_t>(length(random)), '\0');
    for (char& c : s) {
      c = static_cast<char>(i % 2 == 0 ? kEdges[edge(random)] : static_cast<uint8_t>(byte(random)));
    }
    const std::string value = loggedValue(s);
    ASSERT_TRUE(nlohmann::json::accept(value)) << value;
    ASSERT_EQ(value.find('\n'), std::string::npos) << value;
  }
}

}  // namespace
}  // namespace shardscaler::base
