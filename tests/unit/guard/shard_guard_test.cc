// The webhook handler: a body in, an HTTP answer out, one observer call per review.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "guard_fixtures.h"
#include "shardscaler/guard/shard_guard.h"

namespace shardscaler::guard {
namespace {

using namespace testing;
using ::testing::HasSubstr;

std::string reviewBody(const AdmissionRequest& r) {
  Json request = {
      {"uid", r.uid},
      {"resource", {{"group", r.group}, {"version", r.version}, {"resource", r.resource}}},
      {"namespace", r.ns},
      {"name", r.name},
      {"operation", std::string(toString(r.operation))},
      {"userInfo", {{"username", r.user.username}, {"groups", r.user.groups}}},
      {"dryRun", r.dry_run},
      {"object", r.object},
      {"oldObject", r.old_object}};
  return Json{
      {"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"request", request}}
      .dump();
}

class ShardGuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clock_.setSystemTime(fixedNow());
    live_.shard_set = LiveRead::found(shardSetJson(3));
    live_.target_object = LiveRead::found(targetJson(3));
  }

  k8s::ManualClock clock_;
  FakeLiveObjects live_;
  std::vector<std::string> observed_;
  ShardGuard guard_{
      live_, clock_, GuardConfig{}, [this](const ReviewRecord& r) {
        observed_.push_back(r.verdict ? r.verdict->reason : "error: " + std::string(r.error));
      }};
};

TEST_F(ShardGuardTest, DenialIsAnAdmissionResponse) {
  const HttpAnswer answer = guard_.review(reviewBody(deleteRequest(activeShard(1))));
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.content_type, "application/json");
  const Json body = Json::parse(answer.body);
  EXPECT_EQ(body["response"]["uid"], "0c8f5a4e-uid");
  EXPECT_EQ(body["response"]["allowed"], false);
  EXPECT_EQ(body["response"]["status"]["code"], 403);
  EXPECT_THAT(body["response"]["status"]["message"].get<std::string>(),
              HasSubstr("rule ActiveShard: StatefulSet monitoring/prometheus-main-shard-1"));
  EXPECT_EQ(observed_, std::vector<std::string>{"ActiveShard"});
}

TEST_F(ShardGuardTest, DeadlineIsJudgedAtTheClocksTime) {
  const std::string body = reviewBody(deleteRequest(retainedShard(3, "2026-11-22T10:00:05Z")));
  EXPECT_EQ(Json::parse(guard_.review(body).body)["response"]["allowed"], false);
  clock_.advance(std::chrono::seconds(6));
  EXPECT_EQ(Json::parse(guard_.review(body).body)["response"]["allowed"], true);
  EXPECT_EQ(observed_, (std::vector<std::string>{"RetainedBeforeDeadline", "DeadlinePassed"}));
}

TEST_F(ShardGuardTest, BadBodyIs400WithTheReason) {
  const HttpAnswer answer = guard_.review("{not json");
  EXPECT_EQ(answer.status, 400);
  EXPECT_EQ(answer.content_type, "text/plain; charset=utf-8");
  EXPECT_EQ(answer.body, "AdmissionReview: body is not valid JSON\n");
  EXPECT_EQ(observed_, std::vector<std::string>{"error: AdmissionReview: body is not valid JSON"});
  EXPECT_TRUE(live_.reads.empty());
}

}  // namespace
}  // namespace shardscaler::guard
