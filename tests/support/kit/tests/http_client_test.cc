#include "shardscaler/test_kit/http_client.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "shardscaler/test_kit/http_get.h"
#include "shardscaler/test_kit/test_http_server.h"

namespace shardscaler::test_kit {
namespace {

using namespace std::chrono_literals;

TEST(HttpGet, ReturnsTheStatusAndBodyAndSendsTheBearerToken) {
  HttpServer server([](const HttpRequest&) {
    return HttpResponse{.status = 503, .body = "not yet!", .content_type = "text/plain"};
  });
  const HttpGetResult result =
      httpGet(server.url() + "/-/ready?x=1", {.timeout = 10s, .bearer_token = "t0ken"});
  EXPECT_EQ(result.status, 503) << result.error;
  EXPECT_EQ(result.body, "not yet!");
  EXPECT_EQ(result.error, "");
  const HttpRequest request = server.lastRequest();
  EXPECT_EQ(request.method, "GET");
  EXPECT_EQ(request.target, "/-/ready?x=1");
  EXPECT_EQ(request.header("authorization"), "Bearer t0ken");
}

TEST(HttpGet, SendsBasicAuth) {
  HttpServer server([](const HttpRequest&) { return HttpResponse{.body = "ok"}; });
  const HttpGetResult result =
      httpGet(server.url() + "/metrics", {.timeout = 10s, .basic_auth = {{"user", "secret"}}});
  EXPECT_EQ(result.status, 200) << result.error;
  EXPECT_EQ(result.body, "ok");
  EXPECT_EQ(server.lastRequest().header("authorization"), "Basic dXNlcjpzZWNyZXQ=");
}

TEST(HttpGet, ReportsARefusedConnectionAsNoResponse) {
  // Bound but never listening for as long as the test runs, so no one else can take the port.
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const HttpGetResult result =
      httpGet("http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/", {.timeout = 10s});
  ::close(fd);
  EXPECT_EQ(result.status, 0);
  EXPECT_NE(result.error, "");
}

TEST(HttpGet, GivesUpAtTheTimeout) {
  HttpServer server([](const HttpRequest&) { return HttpResponse{.hold = true}; });
  const auto start = std::chrono::steady_clock::now();
  const HttpGetResult result = httpGet(server.url() + "/", {.timeout = 200ms});
  EXPECT_EQ(result.status, 0);
  EXPECT_NE(result.error, "");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  server.releaseHeld();
}

TEST(HttpClient, SendsTheMethodHeadersAndBodyAndKeepsTheConnection) {
  HttpServer server([](const HttpRequest& request) {
    return HttpResponse{.status = 201, .body = request.method + " " + request.body};
  });
  HttpClient client;
  const ClientReply first = client.perform({.url = server.url() + "/things",
                                            .method = "PUT",
                                            .body = R"({"a":1})",
                                            .headers = {"Content-Type: application/json"}});
  EXPECT_EQ(first.code, CURLE_OK) << first.error;
  EXPECT_EQ(first.status, 201);
  EXPECT_EQ(first.body, R"(PUT {"a":1})");
  EXPECT_EQ(first.tls_version, "") << "plain HTTP";
  EXPECT_EQ(server.lastRequest().header("content-type"), "application/json");
  const ClientReply second = client.perform({.url = server.url() + "/things", .method = "POST"});
  EXPECT_EQ(second.body, "POST ");
  EXPECT_EQ(server.lastRequest().connection, 1) << "the second request reused the connection";
  EXPECT_EQ(requestOnce({.url = server.url() + "/"}).body, "GET ");
  EXPECT_EQ(server.lastRequest().connection, 2) << "requestOnce opens a connection of its own";
}

TEST(UrlEncode, PercentEncodesEverythingButUnreservedCharacters) {
  EXPECT_EQ(urlEncode("up{job=\"a b\"}[1h]/x&y-z_~."),
            "up%7Bjob%3D%22a%20b%22%7D%5B1h%5D%2Fx%26y-z_~.");
  EXPECT_EQ(urlEncode(""), "");
}

}  // namespace
}  // namespace shardscaler::test_kit
