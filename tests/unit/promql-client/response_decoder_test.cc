#include "shardscaler/promql_client/response_decoder.h"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

namespace shardscaler::promql {
namespace {

using std::chrono::milliseconds;

Timestamp at(int64_t ms) { return Timestamp(milliseconds(ms)); }

QueryResult decodeOk(const std::string& body) {
  auto decoded = decodeApiResponse(body);
  EXPECT_TRUE(decoded.has_value()) << decoded.error();
  if (!decoded) return {};
  EXPECT_TRUE(decoded->success);
  EXPECT_TRUE(decoded->result.has_value());
  return decoded->result ? *decoded->result : QueryResult{};
}

std::string decodeError(const std::string& body) {
  auto decoded = decodeApiResponse(body);
  EXPECT_FALSE(decoded.has_value());
  return decoded ? std::string() : decoded.error();
}

TEST(ParseSampleValue, GoFloatFormatsAndSpecialValues) {
  EXPECT_EQ(parseSampleValue("1"), 1.0);
  EXPECT_EQ(parseSampleValue("-2.5"), -2.5);
  EXPECT_EQ(parseSampleValue("1e+06"), 1e6);
  EXPECT_EQ(parseSampleValue("1.2345678901234567e-300"), 1.2345678901234567e-300);
  EXPECT_TRUE(std::isnan(*parseSampleValue("NaN")));
  EXPECT_EQ(parseSampleValue("+Inf"), INFINITY);
  EXPECT_EQ(parseSampleValue("-Inf"), -INFINITY);
  EXPECT_FALSE(parseSampleValue(""));
  EXPECT_FALSE(parseSampleValue("+"));
  EXPECT_FALSE(parseSampleValue("1x"));
  EXPECT_FALSE(parseSampleValue("++1"));
  EXPECT_FALSE(parseSampleValue(" 1"));
}

TEST(DecodeApiResponse, Vector) {
  auto result = decodeOk(R"({"status":"success","data":{"resultType":"vector","result":[
      {"metric":{"__name__":"up","job":"prometheus","instance":"localhost:9090"},
       "value":[1435781451.781,"1"]},
      {"metric":{},"value":[1435781451,"0.5"]}]}})");
  ASSERT_EQ(result.type(), ResultType::Vector);
  const Vector& v = *result.vector();
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].metric.get("job"), "prometheus");
  EXPECT_EQ(v[0].metric.get("__name__"), "up");
  EXPECT_EQ(v[0].metric.get("missing"), "");
  EXPECT_EQ(v[0].metric.size(), 3u);
  EXPECT_EQ(v[0].point.timestamp, at(1435781451781));
  EXPECT_EQ(v[0].point.value, 1.0);
  EXPECT_TRUE(v[1].metric.empty());
  EXPECT_EQ(v[1].point.timestamp, at(1435781451000));
  EXPECT_EQ(v[1].point.value, 0.5);
  EXPECT_TRUE(result.warnings.empty());
}

TEST(DecodeApiResponse, MatrixWithSpecialValues) {
  auto result = decodeOk(R"({"status":"success","data":{"resultType":"matrix","result":[
      {"metric":{"pod":"a"},"values":[[1.5,"NaN"],[2.5,"+Inf"],[3.5,"-Inf"],[4.5,"7"]]},
      {"metric":{"pod":"b"},"values":[]}]}})");
  ASSERT_EQ(result.type(), ResultType::Matrix);
  const Matrix& m = *result.matrix();
  ASSERT_EQ(m.size(), 2u);
  ASSERT_EQ(m[0].points.size(), 4u);
  EXPECT_TRUE(std::isnan(m[0].points[0].value));
  EXPECT_EQ(m[0].points[0].timestamp, at(1500));
  EXPECT_EQ(m[0].points[1].value, INFINITY);
  EXPECT_EQ(m[0].points[2].value, -INFINITY);
  EXPECT_EQ(m[0].points[3].value, 7.0);
  EXPECT_EQ(m[0].points[3].timestamp, at(4500));
  EXPECT_EQ(m[1].metric.get("pod"), "b");
  EXPECT_TRUE(m[1].points.empty());
}

TEST(DecodeApiResponse, ScalarAndString) {
  auto scalar =
      decodeOk(R"({"status":"success","data":{"resultType":"scalar","result":[12.345,"-Inf"]}})");
  ASSERT_EQ(scalar.type(), ResultType::Scalar);
  EXPECT_EQ(scalar.scalar()->point.timestamp, at(12345));
  EXPECT_EQ(scalar.scalar()->point.value, -INFINITY);

  auto text = decodeOk(
      R"({"status":"success","data":{"resultType":"string","result":[1,"NaN is text here"]}})");
  ASSERT_EQ(text.type(), ResultType::String);
  EXPECT_EQ(text.string()->timestamp, at(1000));
  EXPECT_EQ(text.string()->value, "NaN is text here");
  EXPECT_EQ(text.vector(), nullptr);
}

TEST(DecodeApiResponse, ResultTypeMayFollowTheResult) {
  auto result = decodeOk(R"({"data":{"result":[{"value":[1,"2"],"metric":{"a":"b"}}],
      "resultType":"vector"},"status":"success"})");
  ASSERT_EQ(result.type(), ResultType::Vector);
  EXPECT_EQ(result.vector()->at(0).point.value, 2.0);
  EXPECT_EQ(result.vector()->at(0).metric.get("a"), "b");

  auto scalar = decodeOk(R"({"data":{"result":[1,"3"],"resultType":"scalar"},"status":"success"})");
  EXPECT_EQ(scalar.scalar()->point.value, 3.0);
}

TEST(DecodeApiResponse, EmptyVectorAndUnknownKeysAreFine) {
  auto result = decodeOk(R"({"status":"success","extra":{"x":[1,{"y":null}]},
      "data":{"resultType":"vector","result":[],"stats":{"timings":{"a":1.5}}},"warnings":null})");
  ASSERT_EQ(result.type(), ResultType::Vector);
  EXPECT_TRUE(result.vector()->empty());
}

TEST(DecodeApiResponse, WarningsAndInfos) {
  auto result = decodeOk(R"({"status":"success","warnings":["w1","w2"],"infos":["i1"],
      "data":{"resultType":"vector","result":[]}})");
  EXPECT_EQ(result.warnings, (std::vector<std::string>{"w1", "w2", "i1"}));
}

TEST(DecodeApiResponse, ErrorEnvelope) {
  auto decoded = decodeApiResponse(
      R"({"status":"error","errorType":"bad_data","error":"parse error","warnings":["w"]})");
  ASSERT_TRUE(decoded.has_value()) << decoded.error();
  EXPECT_FALSE(decoded->success);
  EXPECT_EQ(decoded->error_type, "bad_data");
  EXPECT_EQ(decoded->error, "parse error");
  EXPECT_EQ(decoded->warnings, std::vector<std::string>{"w"});
  EXPECT_FALSE(decoded->result.has_value());
}

TEST(DecodeApiResponse, NativeHistogramsAreDroppedWithAWarning) {
  auto result = decodeOk(R"({"status":"success","data":{"resultType":"vector","result":[
      {"metric":{"a":"1"},"histogram":[1,{"count":"2","sum":"3","buckets":[[0,"0","1","2"]]}]},
      {"metric":{"a":"2"},"value":[1,"5"]}]}})");
  ASSERT_EQ(result.vector()->size(), 1u);
  EXPECT_EQ(result.vector()->at(0).metric.get("a"), "2");
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_NE(result.warnings[0].find("1 native histogram series dropped"), std::string::npos);
}

TEST(DecodeApiResponse, RejectsMalformedResponses) {
  EXPECT_NE(decodeError("").find("invalid JSON"), std::string::npos);
  EXPECT_NE(decodeError("<html>bad gateway</html>").find("invalid JSON at byte"),
            std::string::npos);
  EXPECT_NE(decodeError("[]").find("array"), std::string::npos);
  EXPECT_NE(decodeError("null").find("null"), std::string::npos);
  EXPECT_NE(decodeError(R"({"data":{}})").find("no \"status\""), std::string::npos);
  EXPECT_NE(decodeError(R"({"status":"success"})").find("no data"), std::string::npos);
  EXPECT_NE(decodeError(R"({"status":"error"})").find("errorType"), std::string::npos);
  EXPECT_NE(decodeError(R"({"status":"maybe","data":{}})").find("unknown status"),
            std::string::npos);
  EXPECT_NE(decodeError(R"({"status":"success","data":{"result":[]}})").find("no resultType"),
            std::string::npos);
  EXPECT_NE(decodeError(R"({"status":"success","data":{"resultType":"tree","result":[]}})")
                .find("unknown resultType"),
            std::string::npos);
  // Shape and type disagree.
  EXPECT_NE(decodeError(R"({"status":"success","data":{"resultType":"vector","result":[
      {"metric":{},"values":[[1,"1"]]}]}})")
                .find("resultType is \"vector\""),
            std::string::npos);
  EXPECT_NE(decodeError(R"({"status":"success","data":{"resultType":"matrix","result":[1,"1"]}})")
                .find("pair"),
            std::string::npos);
  EXPECT_NE(decodeError(R"({"status":"success","data":{"resultType":"scalar","result":[]}})")
                .find("no [time, value] pair"),
            std::string::npos);
  // Values that are not what the API promises.
  EXPECT_NE(decodeError(R"({"status":"success","data":{"resultType":"vector","result":[
      {"metric":{},"value":[1,"one"]}]}})")
                .find("\"one\" is not a number"),
            std::string::npos);
  EXPECT_NE(decodeError(R"({"status":"success","data":{"resultType":"vector","result":[
      {"metric":{},"value":[1,2]}]}})")
                .find("more than one timestamp"),
            std::string::npos);
  EXPECT_NE(decodeError(R"({"status":"success","data":{"resultType":"vector","result":[
      {"metric":{"a":1},"value":[1,"2"]}]}})")
                .find("label \"a\""),
            std::string::npos);
  EXPECT_NE(decodeError(R"({"status":"success","data":{"resultType":"vector","result":[
      {"metric":{}}]}})")
                .find("neither"),
            std::string::npos);
  EXPECT_NE(decodeError(R"({"status":"success","data":{"resultType":"vector","result":[
      {"metric":{},"value":[1]}]}})")
                .find("pair"),
            std::string::npos);
  EXPECT_NE(
      decodeError(R"({"status":"success","data":{"resultType":"scalar","result":[1e300,"1"]}})")
          .find("out of range"),
      std::string::npos);
  EXPECT_NE(decodeError(R"({"status":"success","data":{"resultType":"vector","result":{}}})")
                .find("not an array"),
            std::string::npos);
}

TEST(Labels, LookupPrintingAndOrderInsensitiveEquality) {
  Labels a{{"b", "2"}, {"a", "x\"y"}};
  Labels b{{"a", "x\"y"}, {"b", "2"}};
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.toString(), R"({a="x\"y", b="2"})");
  EXPECT_TRUE(a.has("b"));
  EXPECT_FALSE(a.has("c"));
  EXPECT_NE(a, (Labels{{"a", "x\"y"}, {"b", "3"}}));
  EXPECT_NE(a, (Labels{{"a", "x\"y"}}));
}

}  // namespace
}  // namespace shardscaler::promql
