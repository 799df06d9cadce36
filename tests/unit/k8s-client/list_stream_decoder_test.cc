#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "shardscaler/k8s_client/list_stream.h"

namespace shardscaler::k8s {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A list whose JSON holds what a naive splitter trips on: braces and brackets inside strings,
// escaped quotes and backslashes, multi-byte UTF-8, "items" as a value and inside an item, and
// metadata after the items.
const std::string kList =
    R"({"kind":"List","apiVersion":"v1","note":"items","metadata":{"resourceVersion":"7",)"
    R"("items":["not","these"]},"items":[)"
    R"({"metadata":{"name":"a","labels":{"k":"}{][\"\\"}},"items":[{"x":1}]} , )"
    R"({"metadata":{"name":"b","annotations":{"n":"Grüße ✓ [x]"}},"spec":{"replicas":0}})"
    R"(],"trailer":{"continue":""}})";

const FieldMask& itemFields() {
  static const FieldMask mask =
      FieldMask::keepNone().keep({"metadata", "name"}).keep({"metadata", "labels"});
  return mask;
}

Json decodeWhole(std::string_view text, const FieldMask* item_fields) {
  if (item_fields == nullptr) return Json::parse(text);
  return *parseProjected(text, FieldMask::keepAll().put({"items"}, *item_fields));
}

Result<Json> decodeInChunks(std::string_view text, std::size_t chunk,
                            const FieldMask* item_fields) {
  ListStreamDecoder decoder(item_fields);
  for (std::size_t at = 0; at < text.size(); at += chunk) {
    auto fed = decoder.feed(text.substr(at, chunk));
    if (!fed) return std::unexpected(fed.error());
  }
  return decoder.finish();
}

TEST(ListStreamDecoder, AnyChunkingGivesWhatDecodingTheWholeBodyGives) {
  for (const FieldMask* fields : {&itemFields(), static_cast<const FieldMask*>(nullptr)}) {
    const Json want = decodeWhole(kList, fields);
    for (std::size_t chunk = 1; chunk <= kList.size(); ++chunk) {
      auto got = decodeInChunks(kList, chunk, fields);
      ASSERT_TRUE(got.has_value()) << "chunk " << chunk << ": " << got.error().describe();
      ASSERT_EQ(*got, want) << "chunk " << chunk;
    }
  }
  auto projected = decodeInChunks(kList, 5, &itemFields());
  ASSERT_TRUE(projected.has_value());
  ASSERT_EQ((*projected)["items"].size(), 2u);
  EXPECT_EQ((*projected)["items"][0]["metadata"]["labels"]["k"], "}{][\"\\");
  EXPECT_FALSE((*projected)["items"][0].contains("items"));
  EXPECT_FALSE((*projected)["items"][1].contains("spec"));
  EXPECT_EQ((*projected)["metadata"]["items"], Json::array({"not", "these"}));
}

TEST(ListStreamDecoder, KeepsNoItemBytesBesideTheItemBeingDecoded) {
  std::string list = R"({"metadata":{"resourceVersion":"1"},"items":[)";
  const std::string filler(1000, 'x');
  for (int i = 0; i < 200; ++i) {
    if (i > 0) list += ",";
    list += R"({"metadata":{"name":"s)" + std::to_string(i) + R"("},"data":")" + filler + R"("})";
  }
  list += "]}";
  ListStreamDecoder decoder(&itemFields());
  for (std::size_t at = 0; at < list.size(); at += 4096) {
    ASSERT_TRUE(decoder.feed(std::string_view(list).substr(at, 4096)).has_value());
  }
  EXPECT_EQ(decoder.rest(), R"({"metadata":{"resourceVersion":"1"},"items":[]})");
  auto got = decoder.finish();
  ASSERT_TRUE(got.has_value()) << got.error().describe();
  ASSERT_EQ((*got)["items"].size(), 200u);
  EXPECT_EQ((*got)["items"][199], Json::parse(R"({"metadata":{"name":"s199"}})"));
}

TEST(ListStreamDecoder, ABodyWithoutItemsIsKeptWholeForItsMessage) {
  const std::string status =
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"gone [x]","code":410})";
  ListStreamDecoder decoder(&itemFields());
  ASSERT_TRUE(decoder.feed(status.substr(0, 10)).has_value());
  ASSERT_TRUE(decoder.feed(status.substr(10)).has_value());
  EXPECT_EQ(decoder.rest(), status);
  auto got = decoder.finish();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ((*got)["code"], 410);
}

TEST(ListStreamDecoder, AnItemThatIsNotAnObjectFailsAndStaysFailed) {
  ListStreamDecoder decoder(&itemFields());
  auto fed = decoder.feed(R"({"items":[{"metadata":{}}, 5])");
  ASSERT_FALSE(fed.has_value());
  EXPECT_EQ(fed.error().kind, ErrorKind::Decode);
  EXPECT_THAT(fed.error().message, HasSubstr("must be an object"));
  EXPECT_FALSE(decoder.feed("}").has_value());
  EXPECT_FALSE(decoder.finish().has_value());
}

TEST(ListStreamDecoder, ItemsMustBeSeparatedByExactlyOneComma) {
  for (std::string_view bad : {R"({"items":[{} {}]})", R"({"items":[{},,{}]})",
                               R"({"items":[,{}]})", R"({"items":[{},]})", R"({"items":[,]})"}) {
    ListStreamDecoder decoder(nullptr);
    EXPECT_FALSE(decoder.feed(bad).has_value()) << bad;
  }
  for (std::string_view good :
       {R"({"items":[]})", R"({"items":[ ]})", R"({"items":[ {} , {} ]})"}) {
    ListStreamDecoder decoder(nullptr);
    ASSERT_TRUE(decoder.feed(good).has_value()) << good;
    auto got = decoder.finish();
    ASSERT_TRUE(got.has_value()) << good;
    EXPECT_EQ(*got, Json::parse(good)) << good;
  }
}

TEST(ListStreamDecoder, AnItemThatIsNotJsonFailsNamingIt) {
  ListStreamDecoder decoder(nullptr);
  auto fed = decoder.feed(R"({"items":[{"metadata":{"name":"a"}},{"metadata":{"name":tru}}]})");
  ASSERT_FALSE(fed.has_value());
  EXPECT_THAT(fed.error().message, HasSubstr("list item 1"));
  EXPECT_THAT(fed.error().message, HasSubstr("tru"));
}

TEST(ListStreamDecoder, OnlyTheItemsMemberOfATopLevelObjectIsStreamed) {
  for (std::string_view text : {R"([0,"items",[{"a":1}]])", R"({"x":{"items":[{"a":1}]}})",
                                R"({"x":"items","y":[{"a":1}]})"}) {
    ListStreamDecoder decoder(nullptr);
    ASSERT_TRUE(decoder.feed(text).has_value()) << text;
    EXPECT_EQ(decoder.rest(), text);
    auto got = decoder.finish();
    ASSERT_TRUE(got.has_value()) << text;
    EXPECT_EQ(*got, Json::parse(text));
  }
}

TEST(ListStreamDecoder, ABodyCutShortFails) {
  for (std::string_view cut : {R"({"items":[{"metadata":{"name":"a"}})", R"({"items":[{"me)",
                               R"({"metadata":{"resourceVersion":"1")"}) {
    ListStreamDecoder decoder(&itemFields());
    ASSERT_TRUE(decoder.feed(cut).has_value()) << cut;
    auto got = decoder.finish();
    ASSERT_FALSE(got.has_value()) << cut;
    EXPECT_EQ(got.error().kind, ErrorKind::Decode);
  }
}

TEST(ListStreamDecoder, ABodyThatIsNotJsonFailsWithItsText) {
  ListStreamDecoder decoder(&itemFields());
  ASSERT_TRUE(decoder.feed("<html>bad gateway</html>").has_value());
  EXPECT_EQ(decoder.rest(), "<html>bad gateway</html>");
  auto got = decoder.finish();
  ASSERT_FALSE(got.has_value());
  EXPECT_THAT(got.error().message, HasSubstr("bad gateway"));
  EXPECT_THAT(got.error().message, Not(HasSubstr("items")));
}

}  // namespace
}  // namespace shardscaler::k8s
