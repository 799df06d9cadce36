#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "shardscaler/k8s_client/api_status.h"

namespace shardscaler::k8s {
namespace {

std::string status(int code, const std::string& reason, const std::string& message,
                   int retry_after = -1) {
  nlohmann::json s = {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
                      {"reason", reason}, {"message", message}, {"code", code}};
  if (retry_after >= 0) s["details"]["retryAfterSeconds"] = retry_after;
  return s.dump();
}

TEST(ErrorStatus, KindsFollowReasonThenCode) {
  EXPECT_EQ(errorKindFor(404, ""), ErrorKind::NotFound);
  EXPECT_EQ(errorKindFor(409, "AlreadyExists"), ErrorKind::AlreadyExists);
  EXPECT_EQ(errorKindFor(409, "Conflict"), ErrorKind::Conflict);
  EXPECT_EQ(errorKindFor(409, ""), ErrorKind::Conflict);
  EXPECT_EQ(errorKindFor(410, "Expired"), ErrorKind::Gone);
  EXPECT_EQ(errorKindFor(410, ""), ErrorKind::Gone);
  EXPECT_EQ(errorKindFor(403, ""), ErrorKind::Forbidden);
  EXPECT_EQ(errorKindFor(401, ""), ErrorKind::Unauthorized);
  EXPECT_EQ(errorKindFor(422, ""), ErrorKind::Invalid);
  EXPECT_EQ(errorKindFor(400, ""), ErrorKind::BadRequest);
  EXPECT_EQ(errorKindFor(429, ""), ErrorKind::TooManyRequests);
  EXPECT_EQ(errorKindFor(500, "InternalError"), ErrorKind::ServerError);
  EXPECT_EQ(errorKindFor(503, ""), ErrorKind::ServerError);
  EXPECT_EQ(errorKindFor(504, ""), ErrorKind::Timeout);
  EXPECT_EQ(errorKindFor(500, "ServerTimeout"), ErrorKind::Timeout);
  EXPECT_EQ(errorKindFor(418, ""), ErrorKind::Other);
}

TEST(ErrorStatus, ForbiddenKeepsTheServersMessageVerbatim) {
  std::string message =
      "pods is forbidden: User \"x\" cannot list resource \"pods\" in API group \"\" in the "
      "namespace \"default\"";
  Error e = errorFromResponse(403, status(403, "Forbidden", message), std::nullopt,
                              "list pods/v1 (GET /api/v1/namespaces/default/pods)");
  EXPECT_EQ(e.kind, ErrorKind::Forbidden);
  EXPECT_EQ(e.http_status, 403);
  EXPECT_EQ(e.reason, "Forbidden");
  EXPECT_EQ(e.message, message);
  EXPECT_EQ(e.describe(), "Forbidden (403): " + message);
}

TEST(ErrorStatus, WithoutStatusTheVerbAndPathAreAdded) {
  Error e = errorFromResponse(403, "<html>denied by proxy</html>\n", std::nullopt,
                              "list pods/v1 (GET /api/v1/pods)");
  EXPECT_EQ(e.kind, ErrorKind::Forbidden);
  EXPECT_EQ(e.message,
            "list pods/v1 (GET /api/v1/pods): the server answered 403 Forbidden: "
            "<html>denied by proxy</html>");
  Error empty = errorFromResponse(503, "", std::nullopt, "get pods/v1 (GET /api/v1/x)");
  EXPECT_EQ(empty.kind, ErrorKind::ServerError);
  EXPECT_EQ(empty.message,
            "get pods/v1 (GET /api/v1/x): the server answered 503 Service Unavailable with an "
            "empty body");
}

TEST(ErrorStatus, RetryAfterFromHeaderElseFromDetails) {
  Error from_details =
      errorFromResponse(429, status(429, "TooManyRequests", "slow down", 7), std::nullopt, "r");
  EXPECT_EQ(from_details.kind, ErrorKind::TooManyRequests);
  EXPECT_EQ(from_details.retry_after, std::chrono::seconds(7));
  Error from_header = errorFromResponse(429, status(429, "TooManyRequests", "slow down", 7),
                                        std::chrono::seconds(3), "r");
  EXPECT_EQ(from_header.retry_after, std::chrono::seconds(3));
  EXPECT_EQ(from_header.describe(), "TooManyRequests (429): slow down (retry after 3s)");
}

TEST(ErrorStatus, ParseRetryAfter) {
  EXPECT_EQ(parseRetryAfter("5"), std::chrono::seconds(5));
  EXPECT_EQ(parseRetryAfter(" 12\r\n"), std::chrono::seconds(12));
  EXPECT_EQ(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT"), std::nullopt);
  EXPECT_EQ(parseRetryAfter("-1"), std::nullopt);
  EXPECT_EQ(parseRetryAfter(""), std::nullopt);
}

TEST(ErrorStatus, WatchErrorEventStatus) {
  auto gone = nlohmann::json::parse(status(410, "Expired", "too old resource version: 5 (90)"));
  Error e = errorFromStatus(gone, "watch pods/v1");
  EXPECT_EQ(e.kind, ErrorKind::Gone);
  EXPECT_EQ(e.http_status, 410);
  EXPECT_EQ(e.message, "too old resource version: 5 (90)");

  Error bare = errorFromStatus(nlohmann::json{{"kind", "Status"}, {"code", 500}}, "watch x");
  EXPECT_EQ(bare.kind, ErrorKind::ServerError);
  EXPECT_EQ(bare.message, "watch x: the server answered 500 with no message");

  Error not_status = errorFromStatus(nlohmann::json("text"), "watch x");
  EXPECT_EQ(not_status.kind, ErrorKind::Decode);
}

TEST(ErrorStatus, DescribeWithoutHttpStatus) {
  Error e;
  e.kind = ErrorKind::Transport;
  e.message = "cannot reach";
  EXPECT_EQ(e.describe(), "Transport: cannot reach");
  EXPECT_EQ(toString(ErrorKind::AlreadyExists), "AlreadyExists");
}

}  // namespace
}  // namespace shardscaler::k8s
