#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "shardscaler/k8s_client/watch_stream.h"

namespace shardscaler::k8s {
namespace {

using ::testing::HasSubstr;

// Three events whose JSON holds the characters a naive splitter trips on: braces and
// brackets inside strings, escaped quotes and backslashes, multi-byte UTF-8.
const std::string kStream =
    R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"1"},"data":{"k":"}{][\"\\"}}})"
    "\n"
    R"({"type":"MODIFIED","object":{"metadata":{"name":"b","resourceVersion":"2"},"note":"Grüße ✓ [x]"}})"
    "\n"
    R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"3"}}})"
    "\n";

std::vector<WatchEvent> decodeIn(const std::vector<std::string_view>& pieces) {
  WatchStreamDecoder decoder;
  std::vector<WatchEvent> events;
  for (auto piece : pieces) {
    auto fed = decoder.feed(piece, [&](WatchEvent&& e) {
      events.push_back(std::move(e));
      return true;
    });
    EXPECT_TRUE(fed.has_value()) << fed.error().describe();
  }
  EXPECT_FALSE(decoder.midEvent());
  return events;
}

void expectTheThreeEvents(const std::vector<WatchEvent>& events, const std::string& label) {
  ASSERT_EQ(events.size(), 3u) << label;
  EXPECT_EQ(events[0].type, WatchEventType::Added) << label;
  EXPECT_EQ(events[0].object["data"]["k"], "}{][\"\\") << label;
  EXPECT_EQ(events[1].type, WatchEventType::Modified) << label;
  EXPECT_EQ(events[1].object["note"], "Grüße ✓ [x]") << label;
  EXPECT_EQ(events[2].type, WatchEventType::Bookmark) << label;
  EXPECT_EQ(events[2].object["metadata"]["resourceVersion"], "3") << label;
}

TEST(WatchStreamDecoder, WholeStreamAtOnce) { expectTheThreeEvents(decodeIn({kStream}), "whole"); }

TEST(WatchStreamDecoder, EverySplitPoint) {
  std::string_view all = kStream;
  for (size_t cut = 0; cut <= all.size(); ++cut) {
    expectTheThreeEvents(decodeIn({all.substr(0, cut), all.substr(cut)}),
                         "cut at " + std::to_string(cut));
  }
}

TEST(WatchStreamDecoder, OneByteAtATime) {
  std::vector<std::string_view> bytes;
  std::string_view all = kStream;
  for (size_t i = 0; i < all.size(); ++i) bytes.push_back(all.substr(i, 1));
  expectTheThreeEvents(decodeIn(bytes), "byte by byte");
}

TEST(WatchStreamDecoder, EventsWithoutNewlinesAndWithCrlf) {
  std::string glued = R"({"type":"ADDED","object":{"a":1}}{"type":"DELETED","object":{"a":2}})"
                      "\r\n  \t";
  auto events = decodeIn({glued});
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].type, WatchEventType::Deleted);
  EXPECT_EQ(events[1].object["a"], 2);
}

TEST(WatchStreamDecoder, ErrorEventIsDecodedAsError) {
  auto events =
      decodeIn({R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})"});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, WatchEventType::Error);
  EXPECT_EQ(events[0].object["code"], 410);
}

TEST(WatchStreamDecoder, PartialEventIsReported) {
  WatchStreamDecoder decoder;
  auto fed = decoder.feed(R"({"type":"ADDED","obj)", [](WatchEvent&&) { return true; });
  ASSERT_TRUE(fed.has_value());
  EXPECT_TRUE(decoder.midEvent());
}

TEST(WatchStreamDecoder, SinkStopsDecoding) {
  WatchStreamDecoder decoder;
  int seen = 0;
  auto fed = decoder.feed(kStream, [&](WatchEvent&&) { return ++seen < 2; });
  ASSERT_TRUE(fed.has_value());
  EXPECT_FALSE(*fed);
  EXPECT_EQ(seen, 2);
}

TEST(WatchStreamDecoder, GarbageIsADecodeError) {
  WatchStreamDecoder decoder;
  auto fed = decoder.feed("<html>", [](WatchEvent&&) { return true; });
  ASSERT_FALSE(fed.has_value());
  EXPECT_EQ(fed.error().kind, ErrorKind::Decode);

  WatchStreamDecoder unknown;
  auto bad_type =
      unknown.feed(R"({"type":"RENAMED","object":{}})", [](WatchEvent&&) { return true; });
  ASSERT_FALSE(bad_type.has_value());
  EXPECT_THAT(bad_type.error().message, HasSubstr("unknown type \"RENAMED\""));

  WatchStreamDecoder no_object;
  auto missing = no_object.feed(R"({"type":"ADDED"})", [](WatchEvent&&) { return true; });
  ASSERT_FALSE(missing.has_value());
  EXPECT_THAT(missing.error().message, HasSubstr("without type or object"));
}

}  // namespace
}  // namespace shardscaler::k8s

namespace shardscaler::k8s {
namespace {

// A mask that keeps only metadata.name: objects of ADDED/MODIFIED/DELETED keep it alone, while
// bookmarks and errors, which the reflector reads other fields of, arrive whole.
TEST(WatchStreamDecoder, ObjectFieldsTrimObjectsButNotBookmarksOrErrors) {
  auto fields = std::make_shared<FieldMask>(FieldMask::keepNone());
  fields->keep({"metadata", "name"});
  WatchStreamDecoder decoder(fields);
  std::vector<WatchEvent> events;
  const std::string stream =
      kStream + R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})";
  // Byte by byte: the mask must not change how events are cut out of the stream.
  for (size_t i = 0; i < stream.size(); ++i) {
    auto fed = decoder.feed(std::string_view(stream).substr(i, 1), [&](WatchEvent&& e) {
      events.push_back(std::move(e));
      return true;
    });
    ASSERT_TRUE(fed.has_value()) << fed.error().describe();
  }
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].type, WatchEventType::Added);
  EXPECT_EQ(events[0].object, Json::parse(R"({"metadata":{"name":"a"}})"));
  EXPECT_EQ(events[1].object, Json::parse(R"({"metadata":{"name":"b"}})"));
  EXPECT_EQ(events[2].type, WatchEventType::Bookmark);
  EXPECT_EQ(events[2].object["metadata"]["resourceVersion"], "3");
  EXPECT_EQ(events[3].type, WatchEventType::Error);
  EXPECT_EQ(events[3].object["code"], 410);

  auto one = decodeWatchEvent(R"({"object":{"metadata":{"name":"c","uid":"u"}},"type":"DELETED"})",
                              fields.get());
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->type, WatchEventType::Deleted);
  EXPECT_EQ(one->object, Json::parse(R"({"metadata":{"name":"c"}})"));

  WatchStreamDecoder broken(fields);
  auto fed = broken.feed(R"({"type":"ADDED","object":{"metadata":{"name":tru}}})",
                         [](WatchEvent&&) { return true; });
  ASSERT_FALSE(fed.has_value());
  EXPECT_EQ(fed.error().kind, ErrorKind::Decode);
}

}  // namespace
}  // namespace shardscaler::k8s
