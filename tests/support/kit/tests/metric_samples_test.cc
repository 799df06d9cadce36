#include "shardscaler/test_kit/metric_samples.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

namespace shardscaler::test_kit {
namespace {

// As prometheus-cpp's TextSerializer writes shardscaler's /metrics.
constexpr std::string_view kExposition = R"(# HELP shardscaler_kube_requests_total Requests.
# TYPE shardscaler_kube_requests_total counter
shardscaler_kube_requests_total{verb="list",code="200"} 7
shardscaler_kube_requests_total{verb="list",code="<error>"} 2
shardscaler_kube_requests_total{verb="get",code="200"} 40
shardscaler_kube_requests_total_extra{verb="list"} 1000
# TYPE shardscaler_guard_reviews_total counter
shardscaler_guard_reviews_total{operation="DELETE",result="allowed"} 3
shardscaler_guard_reviews_total{operation="DELETE",result="bad_request"} 5
shardscaler_guard_reviews_total{operation="UPDATE",result="denied"} 11
# TYPE shardscaler_leader gauge
shardscaler_leader 0
# TYPE shardscaler_workqueue_depth gauge
shardscaler_workqueue_depth{name="shardsets"} 0
# TYPE shardscaler_reconcile_duration_seconds histogram
shardscaler_reconcile_duration_seconds_count 4
shardscaler_reconcile_duration_seconds_sum 0.25
shardscaler_reconcile_duration_seconds_bucket{le="+Inf"} 4
shardscaler_escaped{path="a\"b,c=\"d\"}"} 1.5 1700000000000
)";

TEST(SumSamples, SumsEverySampleOfTheNameAndNoOtherName) {
  EXPECT_EQ(sumSamples(kExposition, "shardscaler_kube_requests_total"), 49);
  EXPECT_EQ(sumSamples(kExposition, "shardscaler_reconcile_duration_seconds_count"), 4);
  EXPECT_EQ(sumSamples(kExposition, "shardscaler_reconcile_duration_seconds_sum"), 0.25);
}

TEST(SumSamples, KeepsTheSamplesWhoseLabelsIncludeTheMatchers) {
  EXPECT_EQ(sumSamples(kExposition, "shardscaler_kube_requests_total", R"(verb="list")"), 9);
  EXPECT_EQ(sumSamples(kExposition, "shardscaler_guard_reviews_total",
                       R"(result="allowed",operation="DELETE")"),
            3);
  EXPECT_EQ(sumSamples(kExposition, "shardscaler_guard_reviews_total", R"(operation="DELETE")"), 8);
  EXPECT_EQ(sumSamples(kExposition, "shardscaler_escaped", R"(path="a\"b,c=\"d\"}")"), 1.5);
}

TEST(SumSamples, AnAbsentSeriesIsNotAZero) {
  EXPECT_EQ(sumSamples(kExposition, "shardscaler_leader"), 0);
  EXPECT_EQ(sumSamples(kExposition, "shardscaler_workqueue_depth"), 0);
  EXPECT_EQ(sumSamples(kExposition, "shardscaler_kube_requests"), std::nullopt);
  EXPECT_EQ(sumSamples(kExposition, "shardscaler_kube_requests_total", R"(verb="watch")"),
            std::nullopt);
  EXPECT_EQ(sumSamples(kExposition, "shardscaler_leader", R"(name="x")"), std::nullopt);
  EXPECT_EQ(sumSamples("", "shardscaler_leader"), std::nullopt);
}

TEST(SumSamples, ReadsTheSpecialValues) {
  EXPECT_EQ(sumSamples("x +Inf\n", "x"), INFINITY);
  EXPECT_EQ(sumSamples("x -Inf\r\n", "x"), -INFINITY);
  EXPECT_TRUE(std::isnan(sumSamples("x NaN", "x").value()));
  EXPECT_EQ(sumSamples("x{} 1e3", "x"), 1000);
}

TEST(SumSamples, AMalformedSampleOfTheNameOrMatcherThrows) {
  EXPECT_THROW(sumSamples("x{a=\"1\"\n", "x"), std::invalid_argument);
  EXPECT_THROW(sumSamples("x one\n", "x"), std::invalid_argument);
  EXPECT_THROW(sumSamples("x\n", "x"), std::invalid_argument);
  EXPECT_THROW(sumSamples("", "x", "a=1"), std::invalid_argument);
  // Another name's lines are not read.
  EXPECT_EQ(sumSamples("y{{{ z\nx 2\n", "x"), 2);
}

TEST(SumSamplesBy, SumsPerCombinationOfTheGroupingLabels) {
  constexpr std::string_view kVerb[] = {"verb"};
  EXPECT_EQ(sumSamplesBy(kExposition, "shardscaler_kube_requests_total", kVerb),
            (std::map<std::string, double>{{"get", 40}, {"list", 9}}));
  constexpr std::string_view kVerbCode[] = {"code", "verb"};
  EXPECT_EQ(
      sumSamplesBy(kExposition, "shardscaler_kube_requests_total", kVerbCode, R"(verb="list")"),
      (std::map<std::string, double>{{"200 list", 7}, {"<error> list", 2}}));
}

TEST(SumSamplesBy, AMissingGroupingLabelReadsAsEmptyAndNoSampleAsNoEntry) {
  constexpr std::string_view kName[] = {"name"};
  EXPECT_EQ(sumSamplesBy(kExposition, "shardscaler_leader", kName),
            (std::map<std::string, double>{{"", 0}}));
  EXPECT_TRUE(sumSamplesBy(kExposition, "shardscaler_absent", kName).empty());
  EXPECT_THROW(sumSamplesBy(kExposition, "x", kName, "a=1"), std::invalid_argument);
}

}  // namespace
}  // namespace shardscaler::test_kit
