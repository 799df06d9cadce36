#include <gtest/gtest.h>

#include <string>

#include "shardscaler/k8s_client/field_mask.h"
#include "shardscaler/k8s_client/kube_client.h"

namespace shardscaler::k8s {
namespace {

// A StatefulSet the way the API server sends it, trimmed to what the tests need.
const char* kStatefulSet = R"({
  "kind": "StatefulSet", "apiVersion": "apps/v1",
  "metadata": {
    "name": "prometheus-main-shard-1", "namespace": "monitoring", "resourceVersion": "42",
    "generation": 3, "uid": "u-1",
    "labels": {"operator.prometheus.io/name": "main", "operator.prometheus.io/shard": "1",
               "app.kubernetes.io/name": "prometheus"},
    "annotations": {"operator.prometheus.io/deletion-timestamp": "2026-01-01T00:00:00Z",
                    "kubectl.kubernetes.io/last-applied-configuration": "{\"huge\": true}"},
    "managedFields": [{"manager": "op", "fieldsV1": {"f:spec": {"f:replicas": {}}}}]
  },
  "spec": {"replicas": 0, "template": {"spec": {"containers": [{"name": "prometheus",
           "args": ["--a", "--b"], "env": [{"name": "SHARD", "value": "1"}]}]}}},
  "status": {"replicas": 0, "conditions": [{"type": "A", "status": "True", "observedGeneration": 3},
                                           {"type": "B", "status": "False", "observedGeneration": 2}]},
  "odd": [1, -2, 3.5, true, null, "x", {"nested": [[]]}]
})";

Json parsed() { return Json::parse(kStatefulSet); }

// The projection must equal the DOM with the same mask applied after a full parse.
void expectSameAsApply(const FieldMask& mask) {
  Json expected = parsed();
  mask.apply(expected);
  auto projected = parseProjected(kStatefulSet, mask);
  ASSERT_TRUE(projected.has_value()) << projected.error().describe();
  EXPECT_EQ(*projected, expected);
}

TEST(FieldMask, KeepAllIsTheWholeObject) {
  auto projected = parseProjected(kStatefulSet, FieldMask::keepAll());
  ASSERT_TRUE(projected.has_value());
  EXPECT_EQ(*projected, parsed());
  EXPECT_TRUE(FieldMask::keepAll().keepsEverything());
  EXPECT_FALSE(FieldMask::keepNone().keepsEverything());
}

TEST(FieldMask, KeepNamesOnlyWhatItKeeps) {
  auto mask = FieldMask::keepNone();
  mask.keep({"metadata", "name"})
      .keep({"metadata", "namespace"})
      .keep({"metadata", "labels", "operator.prometheus.io/name"})
      .keep({"spec", "replicas"});
  auto projected = parseProjected(kStatefulSet, mask);
  ASSERT_TRUE(projected.has_value());
  EXPECT_EQ(*projected, Json::parse(R"({
    "metadata": {"name": "prometheus-main-shard-1", "namespace": "monitoring",
                 "labels": {"operator.prometheus.io/name": "main"}},
    "spec": {"replicas": 0}})"));
  expectSameAsApply(mask);
}

TEST(FieldMask, DropRemovesOnlyWhatItNames) {
  auto mask = FieldMask::keepAll();
  mask.drop({"metadata", "managedFields"}).drop({"spec", "template"});
  auto projected = parseProjected(kStatefulSet, mask);
  ASSERT_TRUE(projected.has_value());
  Json expected = parsed();
  expected["metadata"].erase("managedFields");
  expected["spec"].erase("template");
  EXPECT_EQ(*projected, expected);
  expectSameAsApply(mask);
}

TEST(FieldMask, ArraysAreTransparent) {
  auto mask = FieldMask::keepNone();
  mask.keep({"status", "conditions", "observedGeneration"}).keep({"odd", "nested"});
  auto projected = parseProjected(kStatefulSet, mask);
  ASSERT_TRUE(projected.has_value());
  // Scalars in a masked array are kept whole; objects in it follow the mask.
  EXPECT_EQ(*projected, Json::parse(R"({
    "status": {"conditions": [{"observedGeneration": 3}, {"observedGeneration": 2}]},
    "odd": [1, -2, 3.5, true, null, "x", {"nested": [[]]}]})"));
  expectSameAsApply(mask);
}

TEST(FieldMask, PutPlacesAMaskUnderAPath) {
  auto items = FieldMask::keepNone();
  items.keep({"metadata", "name"});
  auto list = FieldMask::keepAll().put({"items"}, items);
  const std::string text = R"({"kind": "StatefulSetList", "metadata": {"resourceVersion": "9"},
    "items": [)" + std::string(kStatefulSet) +
                           "," + kStatefulSet + "]}";
  auto projected = parseProjected(text, list);
  ASSERT_TRUE(projected.has_value());
  EXPECT_EQ(*projected, Json::parse(R"({"kind": "StatefulSetList",
    "metadata": {"resourceVersion": "9"},
    "items": [{"metadata": {"name": "prometheus-main-shard-1"}},
              {"metadata": {"name": "prometheus-main-shard-1"}}]})"));
}

TEST(FieldMask, LaterRulesRefineEarlierOnes) {
  auto mask = FieldMask::keepNone();
  mask.keep({"metadata"}).drop({"metadata", "managedFields"}).drop({"metadata", "annotations"});
  auto projected = parseProjected(kStatefulSet, mask);
  ASSERT_TRUE(projected.has_value());
  Json expected = parsed()["metadata"];
  expected.erase("managedFields");
  expected.erase("annotations");
  EXPECT_EQ(*projected, Json({{"metadata", expected}}));
  expectSameAsApply(mask);
}

TEST(FieldMask, InvalidJsonIsADecodeErrorWithThePosition) {
  auto mask = FieldMask::keepNone();
  mask.keep({"metadata"});
  for (const char* text : {"", "{\"metadata\": {\"name\": ", "{\"spec\": [1, 2,]}", "{} x"}) {
    auto projected = parseProjected(text, mask);
    ASSERT_FALSE(projected.has_value()) << text;
    EXPECT_EQ(projected.error().kind, ErrorKind::Decode);
    EXPECT_NE(projected.error().message.find("at byte"), std::string::npos)
        << projected.error().message;
  }
}

TEST(FieldMask, StringsWithEscapesAndUnicodeSurvive) {
  const std::string text = R"({"metadata": {"name": "a\"b\\c\u00fc\ud83d\ude00", "x": "y"}})";
  auto mask = FieldMask::keepNone();
  mask.keep({"metadata", "name"});
  auto projected = parseProjected(text, mask);
  ASSERT_TRUE(projected.has_value());
  EXPECT_EQ((*projected)["metadata"]["name"], Json::parse(text)["metadata"]["name"]);
  EXPECT_FALSE((*projected)["metadata"].contains("x"));
}

// The numbers come out as nlohmann's own parser makes them: a non-negative integer unsigned, a
// negative one signed, anything with a fraction or an exponent a double.
TEST(FieldMask, NumbersKeepNlohmannsKinds) {
  const std::string text =
      R"({"u": 7, "zero": 0, "i": -3, "big": 18446744073709551615, "f": 2.5, "e": 1e3})";
  auto projected = parseProjected(text, FieldMask::keepAll());
  ASSERT_TRUE(projected.has_value());
  const Json expected = Json::parse(text);
  EXPECT_EQ(*projected, expected);
  for (const char* key : {"u", "zero", "i", "big", "f", "e"}) {
    EXPECT_EQ((*projected)[key].type(), expected[key].type()) << key;
  }
}

// What the fast tokenizer refuses but JSON allows is still decoded, by nlohmann: nesting deeper
// than simdjson's 1024 levels, an integer beyond 64 bits (nlohmann reads it as a double).
TEST(FieldMask, WhatTheFastPathRefusesIsStillDecoded) {
  const std::string deep = std::string(1500, '[') + std::string(1500, ']');
  const std::string nested = R"({"metadata": {"name": "n"}, "spec": )" + deep + "}";
  auto mask = FieldMask::keepNone();
  mask.keep({"metadata", "name"});
  auto projected = parseProjected(nested, mask);
  ASSERT_TRUE(projected.has_value()) << projected.error().describe();
  EXPECT_EQ(*projected, Json::parse(R"({"metadata": {"name": "n"}})"));

  const std::string huge = R"({"n": 123456789012345678901234567890})";
  auto whole = parseProjected(huge, FieldMask::keepAll());
  ASSERT_TRUE(whole.has_value()) << whole.error().describe();
  EXPECT_EQ(*whole, Json::parse(huge));
}

// A text parsed once leaves nothing behind in the reused parser: the next, shorter one is read
// alone, and a text larger than what a parser is reused for decodes the same.
TEST(FieldMask, ParsesInARowAreIndependent) {
  auto mask = FieldMask::keepNone();
  mask.keep({"metadata", "name"});
  std::string large = R"({"metadata": {"name": "large"}, "data": ")";
  large += std::string(std::size_t{3} << 20, 'x');
  large += "\"}";
  auto first = parseProjected(large, mask);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(*first, Json::parse(R"({"metadata": {"name": "large"}})"));
  auto second = parseProjected(R"({"metadata": {"name": "s"}})", mask);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(*second, Json::parse(R"({"metadata": {"name": "s"}})"));
  EXPECT_FALSE(parseProjected(R"({"metadata": {"name": "s"}}})", mask).has_value());
}

}  // namespace
}  // namespace shardscaler::k8s
