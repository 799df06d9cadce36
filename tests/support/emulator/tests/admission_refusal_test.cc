// Unit tests of recognising an admission webhook's refusal in the API server's answer, built by
// the client's own decoder from the Status bodies kube-apiserver sends.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "admission_refusal.h"
#include "shardscaler/k8s_client/api_status.h"

namespace shardscaler::emulator {
namespace {

k8s::Error answer(int code, const std::string& reason, const std::string& message) {
  nlohmann::json status{
      {"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", nlohmann::json::object()},
      {"status", "Failure"}, {"message", message}, {"code", code}};
  if (!reason.empty()) status["reason"] = reason;
  return k8s::errorFromResponse(code, status.dump(), std::nullopt,
                                "delete statefulsets.v1.apps (DELETE /apis/apps/v1/...)");
}

TEST(AdmissionRefusalTest, ADenialWithTheWebhooksOwnCodeNamesTheWebhook) {
  auto refusal = admissionRefusal(
      answer(403, "",
             "admission webhook \"shards.shardscaler.io\" denied the request: shard 2 "
             "of Prometheus mon/main is retained until 2030-01-01T00:00:00Z"));
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->webhook, "shards.shardscaler.io");
  EXPECT_TRUE(refusal->denied);
}

TEST(AdmissionRefusalTest, ADenialWithoutCodeOrExplanationIsStillADenial) {
  // ToStatusErr: code 400 when the webhook gave none; no message: "without explanation".
  auto refusal = admissionRefusal(answer(400, "",
                                         "admission webhook \"w.example\" denied the request "
                                         "without explanation"));
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->webhook, "w.example");
  EXPECT_TRUE(refusal->denied);
}

TEST(AdmissionRefusalTest, AWebhookThatCouldNotBeCalledIsNotADenial) {
  auto refusal = admissionRefusal(answer(
      500, "InternalError",
      "Internal error occurred: failed calling webhook \"shards.shardscaler.io\": Post "
      "\"https://127.0.0.1:1/validate?timeout=5s\": dial tcp 127.0.0.1:1: connect: refused"));
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->webhook, "shards.shardscaler.io");
  EXPECT_FALSE(refusal->denied);
}

TEST(AdmissionRefusalTest, OtherRefusalsAreNotAdmissionRefusals) {
  EXPECT_FALSE(admissionRefusal(answer(403, "Forbidden",
                                       "statefulsets.apps \"x\" is forbidden: User \"u\" cannot "
                                       "delete resource \"statefulsets\"")));
  EXPECT_FALSE(admissionRefusal(answer(409, "Conflict", "the object has been modified")));
  EXPECT_FALSE(admissionRefusal(answer(400, "BadRequest", "admission webhook mentioned oddly")));
  k8s::Error transport;
  transport.kind = k8s::ErrorKind::Transport;
  transport.message = "admission webhook \"w\" denied the request";  // no HTTP answer at all
  EXPECT_FALSE(admissionRefusal(transport));
}

}  // namespace
}  // namespace shardscaler::emulator
