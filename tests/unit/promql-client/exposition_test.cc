#include "shardscaler/promql_client/exposition.h"

#include <cmath>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace shardscaler::promql {
namespace {

using ::testing::HasSubstr;

// What Debian's Prometheus 2.42 serves, in part.
constexpr std::string_view kPrometheusMetrics =
    "# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n"
    "# TYPE process_start_time_seconds gauge\n"
    "process_start_time_seconds 1.7958405528e+09\n"
    "# HELP prometheus_remote_storage_samples_pending The number of samples pending in the "
    "queues shards to be sent to the remote storage.\n"
    "# TYPE prometheus_remote_storage_samples_pending gauge\n"
    "prometheus_remote_storage_samples_pending{remote_name=\"rx\",url=\"http://127.0.0.1:1/api/"
    "v1/write\"} 5\n"
    "# HELP prometheus_tsdb_head_samples_appended_total Total number of appended samples.\n"
    "# TYPE prometheus_tsdb_head_samples_appended_total counter\n"
    "prometheus_tsdb_head_samples_appended_total{type=\"float\"} 5\n"
    "prometheus_tsdb_head_samples_appended_total{type=\"histogram\"} 0\n"
    "go_gc_duration_seconds{quantile=\"0.5\"} 3.2e-05\n";

std::string errorOf(std::string_view body) {
  auto parsed = parseExposition(body);
  EXPECT_FALSE(parsed.has_value()) << body;
  return parsed ? std::string() : parsed.error();
}

TEST(ParseExposition, ReadsWhatPrometheusServes) {
  auto parsed = parseExposition(kPrometheusMetrics);
  ASSERT_TRUE(parsed) << parsed.error();
  ASSERT_EQ(parsed->size(), 5u);
  EXPECT_EQ((*parsed)[0],
            (ExposedSample{
                .name = "process_start_time_seconds", .labels = {}, .value = 1.7958405528e+09}));
  EXPECT_EQ((*parsed)[1].labels.get("remote_name"), "rx");
  EXPECT_EQ((*parsed)[1].labels.get("url"), "http://127.0.0.1:1/api/v1/write");
  EXPECT_EQ((*parsed)[3].name, "prometheus_tsdb_head_samples_appended_total");
  EXPECT_EQ((*parsed)[3].labels.get("type"), "histogram");
  EXPECT_EQ((*parsed)[4].value, 3.2e-05);
}

TEST(ParseExposition, KeepsOnlyTheNamesAskedForButChecksEveryLine) {
  auto kept = parseExposition(kPrometheusMetrics, [](std::string_view name) {
    return name == "prometheus_tsdb_head_samples_appended_total";
  });
  ASSERT_TRUE(kept) << kept.error();
  EXPECT_EQ(kept->size(), 2u);
  const std::string bad = std::string(kPrometheusMetrics) + "other{a=b} 1\n";
  auto refused = parseExposition(bad, [](std::string_view) { return false; });
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error(), "line 12: a label value must be quoted");
}

TEST(ParseExposition, EscapesSpecialValuesTimestampsAndBlanks) {
  auto parsed = parseExposition(
      "x{a=\"\\\"q\\\"\",b=\"\\\\\",c=\"line\\nbreak\",} +Inf 1700000000000\n"
      "y NaN\n"
      "z -1.5e-3 -12\n"
      "\tw { a = \"1\" }  2\n"
      "\n   \n"
      "v{} -Inf");
  ASSERT_TRUE(parsed) << parsed.error();
  ASSERT_EQ(parsed->size(), 5u);
  EXPECT_EQ((*parsed)[0].labels.get("a"), "\"q\"");
  EXPECT_EQ((*parsed)[0].labels.get("b"), "\\");
  EXPECT_EQ((*parsed)[0].labels.get("c"), "line\nbreak");
  EXPECT_EQ((*parsed)[0].value, INFINITY);
  EXPECT_EQ((*parsed)[0].timestamp_ms, 1700000000000);
  EXPECT_TRUE(std::isnan((*parsed)[1].value));
  EXPECT_EQ((*parsed)[2].timestamp_ms, -12);
  EXPECT_EQ((*parsed)[3].labels.get("a"), "1");
  EXPECT_EQ((*parsed)[4].value, -INFINITY);
}

TEST(ParseExposition, RefusesWhatIsNotTheFormatNamingTheLine) {
  EXPECT_EQ(errorOf("x 1\ny{a=\"1\",a=\"2\"} 1\n"), "line 2: a label is given twice");
  EXPECT_EQ(errorOf("x 1\r\n"), "line 1: a NUL or carriage return is not part of the format");
  EXPECT_EQ(errorOf(std::string_view("x 1\0", 4)),
            "line 1: a NUL or carriage return is not part of the format");
  EXPECT_EQ(errorOf("x\n"), "line 1: a sample has no value");
  EXPECT_EQ(errorOf("x one\n"), "line 1: a sample's value is not a number");
  EXPECT_EQ(errorOf("x 1 2 3\n"), "line 1: a sample has text after its timestamp");
  EXPECT_EQ(errorOf("x 1 1.5\n"), "line 1: a sample's timestamp is not an integer");
  EXPECT_EQ(errorOf("1x 1\n"), "line 1: a sample's metric name is invalid");
  EXPECT_EQ(errorOf("x-y 1\n"), "line 1: a sample's name or labels run into its value");
  EXPECT_EQ(errorOf("x{a=\"1\"}1\n"), "line 1: a sample's name or labels run into its value");
  EXPECT_EQ(errorOf("x{a:b=\"1\"} 1\n"), "line 1: a label name is not followed by '='");
  EXPECT_EQ(errorOf("x{a=\"1\" b=\"2\"} 1\n"),
            "line 1: labels must be separated by ',' and closed by '}'");
  EXPECT_EQ(errorOf("x{a=\"1} 1\n"), "line 1: a label value is not closed with '\"'");
  EXPECT_EQ(errorOf("x{a=\"\\t\"} 1\n"), "line 1: a label value has an unknown escape");
  EXPECT_EQ(errorOf("x{a=\"\xc3\x28\"} 1\n"), "line 1: a label value is not valid UTF-8");
  EXPECT_EQ(errorOf("x{,} 1\n"), "line 1: a label name is missing or invalid");
  EXPECT_EQ(errorOf("# TYPE x counter\n# TYPE x gauge\n"),
            "line 2: a second TYPE line for one metric");
  EXPECT_EQ(errorOf("# HELP x a\n# HELP x b\n"), "line 2: a second HELP line for one metric");
  EXPECT_EQ(errorOf("# TYPE x\n"), "line 1: a TYPE line needs a type");
  EXPECT_EQ(errorOf("# TYPE x info\n"),
            "line 1: a TYPE line's type must be counter, gauge, histogram, summary or untyped");
  EXPECT_EQ(errorOf("# HELP\n"), "line 1: a HELP line needs a metric name");
  EXPECT_EQ(errorOf("# HELP x \\t\n"), "line 1: a HELP text has an unknown escape");
  EXPECT_EQ(errorOf("# TYPE x- counter\n"),
            "line 1: a TYPE line's metric name has a bad character");
}

TEST(ParseExposition, OtherCommentsAndEmptyBodiesAreFine) {
  auto parsed = parseExposition("# anything at all: {}\"\n#\n# HELP x\n# TYPE x untyped\n");
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_TRUE(parsed->empty());
  EXPECT_TRUE(parseExposition("")->empty());
}

TEST(ParseExposition, AnErrorNeverQuotesTheBody) {
  const std::string secret = "x{token=\"s3cr3t\" 1\n";
  EXPECT_THAT(errorOf(secret), ::testing::Not(HasSubstr("s3cr3t")));
}

}  // namespace
}  // namespace shardscaler::promql
