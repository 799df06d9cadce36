#include "shardscaler/promql_client/prometheus_client.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "prometheus_bodies.h"
#include "shardscaler/test_kit/test_http_server.h"
#include "shardscaler/testenv/loopback_ports.h"

namespace shardscaler::promql {
namespace {

using std::chrono::milliseconds;
using test_kit::HttpRequest;
using test_kit::HttpResponse;
using test_kit::HttpServer;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kVectorBody = testing::successBody(
    "vector", R"([{"metric":{"pod":"prometheus-main-0"},"value":[1700000000.5,"41.5"]}])");

std::unique_ptr<PrometheusClient> makeClient(ClientOptions options) {
  auto client = PrometheusClient::create(std::move(options));
  EXPECT_TRUE(client.has_value()) << client.error().describe();
  return client ? std::move(*client) : nullptr;
}

std::unique_ptr<PrometheusClient> makeClient(const HttpServer& server) {
  return makeClient(ClientOptions{.base_url = server.url()});
}

TEST(PrometheusClient, InstantQueryPostsAFormWithOnlyTheParametersSet) {
  HttpServer server([](const HttpRequest&) { return HttpResponse{.body = kVectorBody}; });
  auto client = makeClient(server);

  auto result = client->query({.query = "sum by (pod) (rate(x{a=~\"b|c\"}[5m]))"});
  ASSERT_TRUE(result.has_value()) << result.error().describe();
  ASSERT_EQ(result->vector()->size(), 1u);
  EXPECT_EQ(result->vector()->at(0).metric.get("pod"), "prometheus-main-0");
  EXPECT_EQ(result->vector()->at(0).point.value, 41.5);
  EXPECT_EQ(result->vector()->at(0).point.timestamp, Timestamp(milliseconds(1700000000500)));

  HttpRequest request = server.lastRequest();
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.path, "/api/v1/query");
  EXPECT_EQ(request.header("content-type"), "application/x-www-form-urlencoded");
  EXPECT_EQ(request.params.size(), 1u);
  EXPECT_EQ(request.params["query"], "sum by (pod) (rate(x{a=~\"b|c\"}[5m]))");

  const auto t = std::chrono::system_clock::time_point(milliseconds(1700000123456));
  ASSERT_TRUE(client->query({.query = "up", .time = t, .timeout = milliseconds(2500), .limit = 7}));
  request = server.lastRequest();
  EXPECT_EQ(request.params["time"], "1700000123.456");
  EXPECT_EQ(request.params["timeout"], "2.500");
  EXPECT_EQ(request.params["limit"], "7");
}

TEST(PrometheusClient, EveryResultTypeWithSpecialValues) {
  std::string body;
  HttpServer server([&body](const HttpRequest&) { return HttpResponse{.body = body}; });
  auto client = makeClient(server);

  body = testing::successBody(
      "vector",
      R"([{"metric":{"k":"nan"},"value":[1,"NaN"]},{"metric":{"k":"inf"},"value":[1,"+Inf"]},
                    {"metric":{"k":"-inf"},"value":[1,"-Inf"]}])");
  auto vector = client->query({.query = "v"});
  ASSERT_TRUE(vector.has_value()) << vector.error().describe();
  ASSERT_EQ(vector->vector()->size(), 3u);
  EXPECT_TRUE(std::isnan(vector->vector()->at(0).point.value));
  EXPECT_EQ(vector->vector()->at(1).point.value, INFINITY);
  EXPECT_EQ(vector->vector()->at(2).point.value, -INFINITY);

  body = testing::successBody("matrix", R"([{"metric":{},"values":[[1,"+Inf"],[2,"-Inf"]]}])");
  auto matrix = client->query({.query = "m[1m]"});
  ASSERT_TRUE(matrix.has_value()) << matrix.error().describe();
  EXPECT_EQ(matrix->matrix()->at(0).points[0].value, INFINITY);
  EXPECT_EQ(matrix->matrix()->at(0).points[1].value, -INFINITY);

  body = testing::successBody("scalar", R"([3.25,"NaN"])");
  auto scalar = client->query({.query = "scalar(x)"});
  ASSERT_TRUE(scalar.has_value()) << scalar.error().describe();
  EXPECT_TRUE(std::isnan(scalar->scalar()->point.value));
  EXPECT_EQ(scalar->scalar()->point.timestamp, Timestamp(milliseconds(3250)));

  body = testing::successBody("string", R"([3,"hello"])");
  auto text = client->query({.query = "\"hello\""});
  ASSERT_TRUE(text.has_value()) << text.error().describe();
  EXPECT_EQ(text->string()->value, "hello");
}

struct ApiErrorCase {
  std::string error_type;
  int status;
  ErrorKind kind;
};

class ApiErrors : public ::testing::TestWithParam<ApiErrorCase> {};

TEST_P(ApiErrors, KeepTheServersTypeStatusAndMessageAndNameUrlAndQuery) {
  const ApiErrorCase& c = GetParam();
  HttpServer server([&c](const HttpRequest&) {
    return HttpResponse{.status = c.status,
                        .body = testing::errorBody(c.error_type, "something about " + c.error_type,
                                                   R"(["a warning"])")};
  });
  auto client = makeClient(server);
  auto result = client->query({.query = "rate(foo[5m])"});
  ASSERT_FALSE(result.has_value());
  const Error& e = result.error();
  EXPECT_EQ(e.kind, c.kind);
  EXPECT_EQ(e.http_status, c.status);
  EXPECT_EQ(e.error_type, c.error_type);
  EXPECT_EQ(e.warnings, std::vector<std::string>{"a warning"});
  EXPECT_THAT(e.message, HasSubstr("something about " + c.error_type));
  EXPECT_THAT(e.message, HasSubstr(server.url() + "/api/v1/query"));
  EXPECT_THAT(e.message, HasSubstr("\"rate(foo[5m])\""));
  EXPECT_THAT(e.describe(), HasSubstr("(HTTP " + std::to_string(c.status) + ")"));
  EXPECT_EQ(client->stats().failures, 1u);
}

INSTANTIATE_TEST_SUITE_P(PrometheusClient, ApiErrors,
                         ::testing::Values(ApiErrorCase{"bad_data", 400, ErrorKind::BadData},
                                           ApiErrorCase{"execution", 422, ErrorKind::Execution},
                                           ApiErrorCase{"timeout", 503, ErrorKind::Timeout},
                                           ApiErrorCase{"canceled", 503, ErrorKind::Canceled},
                                           ApiErrorCase{"unavailable", 503, ErrorKind::Unavailable},
                                           ApiErrorCase{"not_found", 404, ErrorKind::NotFound},
                                           ApiErrorCase{"internal", 500, ErrorKind::Internal},
                                           ApiErrorCase{"something_new", 500, ErrorKind::Internal}),
                         [](const auto& info) { return info.param.error_type; });

TEST(PrometheusClient, WarningsOnSuccess) {
  HttpServer server([](const HttpRequest&) {
    return HttpResponse{.body = testing::successBody("vector", "[]", R"(["partial data"])")};
  });
  auto client = makeClient(server);
  auto result = client->query({.query = "x"});
  ASSERT_TRUE(result.has_value()) << result.error().describe();
  EXPECT_TRUE(result->vector()->empty());
  EXPECT_EQ(result->warnings, std::vector<std::string>{"partial data"});
}

// The message goes into a ShardSet's status and Events, which the ShardSet's author reads: what
// a URL answered must not reach them, whatever service it names. Logs get the detail.
TEST(PrometheusClient, ABodyThatIsNotAnApiAnswerIsNeverInTheMessage) {
  int status = 502;
  std::string body = "<html>Bad Gateway: secret-token-1234</html>";
  HttpServer server([&](const HttpRequest&) {
    return HttpResponse{.status = status, .body = body, .content_type = "text/html"};
  });
  auto client = makeClient(server);
  auto result = client->query({.query = "x"});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::Http);
  EXPECT_EQ(result.error().http_status, 502);
  EXPECT_THAT(result.error().message, HasSubstr("HTTP 502"));
  EXPECT_THAT(result.error().message, HasSubstr(std::to_string(body.size()) + " bytes"));
  EXPECT_THAT(result.error().describe(), Not(HasSubstr("secret-token")));
  EXPECT_THAT(result.error().detail, HasSubstr("secret-token-1234"));

  status = 200;
  body = R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{}}]}})";
  result = client->query({.query = "x"});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::Decode);
  EXPECT_THAT(result.error().message, HasSubstr("not a Prometheus API response"));
  EXPECT_THAT(result.error().message, HasSubstr(server.url()));
  EXPECT_THAT(result.error().detail, HasSubstr("neither"));

  // Whatever the decoder quotes of a JSON body (here a status value) stays out of it too.
  body = R"({"status":"secret-token-5678"})";
  result = client->query({.query = "x"});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::Decode);
  EXPECT_THAT(result.error().describe(), Not(HasSubstr("secret-token")));
  EXPECT_THAT(result.error().detail, HasSubstr("secret-token-5678"));
}

TEST(PrometheusClient, AnApiErrorKeepsOnlyTheFirstLineOfItsMessageBounded) {
  const std::string long_line(1000, 'x');
  HttpServer server([&](const HttpRequest&) {
    return HttpResponse{
        .status = 422,
        .body = testing::errorBody("execution", "first line\\nsecond line: secret-token\\u0007")};
  });
  auto client = makeClient(server);
  auto result = client->query({.query = "x"});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::Execution);
  EXPECT_EQ(result.error().error_type, "execution");
  EXPECT_THAT(result.error().message, HasSubstr("first line"));
  EXPECT_THAT(result.error().message, Not(HasSubstr("secret-token")));

  HttpServer long_server([&](const HttpRequest&) {
    return HttpResponse{.status = 400, .body = testing::errorBody("bad_data", long_line)};
  });
  auto long_client = makeClient(long_server);
  result = long_client->query({.query = "x"});
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error().message, HasSubstr(std::string(200, 'x') + "..."));
  EXPECT_THAT(result.error().message, Not(HasSubstr(std::string(201, 'x'))));
}

// Whatever the URL names cannot make the client buffer without bound: a body announced larger
// than the cap is refused at once, one that grows past it (chunked) is cut off there.
TEST(PrometheusClient, AResponseLargerThanTheCapIsRefusedAndNotReadOn) {
  const std::string big(std::size_t{64} * 1024, 'x');
  HttpServer announced([&](const HttpRequest&) { return HttpResponse{.body = big}; });
  auto client = makeClient(
      ClientOptions{.base_url = announced.url(), .max_response_bytes = std::size_t{16} * 1024});
  auto result = client->query({.query = "x"});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::ResponseTooLarge);
  EXPECT_THAT(result.error().message, HasSubstr("larger than 16384 bytes"));
  EXPECT_THAT(result.error().message, HasSubstr(announced.url()));

  std::atomic<int> chunks_sent{0};
  HttpServer streamed([&](const HttpRequest&, test_kit::HttpExchange& exchange) {
    if (!exchange.startChunked(200)) return;
    // Up to 64 MiB, unless the client hangs up first.
    for (int i = 0; i < 1024 && exchange.chunk(big); ++i) chunks_sent.fetch_add(1);
    exchange.endChunked();
  });
  auto streamed_client = makeClient(
      ClientOptions{.base_url = streamed.url(), .max_response_bytes = std::size_t{16} * 1024});
  result = streamed_client->query({.query = "x"});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::ResponseTooLarge);
  EXPECT_EQ(streamed_client->stats().bytes_received, 0u);  // an unread answer counts nothing
  EXPECT_LT(chunks_sent.load(), 1024);

  // At the cap exactly is fine.
  HttpServer exact([&](const HttpRequest&) { return HttpResponse{.body = kVectorBody}; });
  auto exact_client =
      makeClient(ClientOptions{.base_url = exact.url(), .max_response_bytes = kVectorBody.size()});
  EXPECT_TRUE(exact_client->query({.query = "x"}));
}

TEST(PrometheusClient, FallsBackToGetWhenPostIsNotAllowed) {
  HttpServer server([](const HttpRequest& r) {
    if (r.method == "POST") {
      return HttpResponse{
          .status = 405, .body = "method not allowed", .content_type = "text/plain"};
    }
    return HttpResponse{.body = kVectorBody};
  });
  auto client = makeClient(server);
  auto result = client->query({.query = "a b&c=d", .limit = 3});
  ASSERT_TRUE(result.has_value()) << result.error().describe();
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1].method, "GET");
  EXPECT_EQ(requests[1].params["query"], "a b&c=d");
  EXPECT_EQ(requests[1].params["limit"], "3");
}

TEST(PrometheusClient, GetMethodOption) {
  HttpServer server([](const HttpRequest&) { return HttpResponse{.body = kVectorBody}; });
  auto client =
      makeClient(ClientOptions{.base_url = server.url() + "/prefix/", .method = HttpMethod::Get});
  ASSERT_TRUE(client->query({.query = "up"}));
  EXPECT_EQ(server.lastRequest().method, "GET");
  EXPECT_EQ(server.lastRequest().path, "/prefix/api/v1/query");
  EXPECT_EQ(server.lastRequest().params["query"], "up");
}

TEST(PrometheusClient, BearerTokenAndExtraHeaders) {
  HttpServer server([](const HttpRequest&) { return HttpResponse{.body = kVectorBody}; });
  auto client = makeClient(ClientOptions{.base_url = server.url(),
                                         .bearer_token = "s3cret",
                                         .headers = {{"X-Scope-OrgID", "tenant-a"}},
                                         .user_agent = "test-agent"});
  ASSERT_TRUE(client->query({.query = "up"}));
  HttpRequest request = server.lastRequest();
  EXPECT_EQ(request.header("authorization"), "Bearer s3cret");
  EXPECT_EQ(request.header("x-scope-orgid"), "tenant-a");
  EXPECT_EQ(request.header("user-agent"), "test-agent");
  EXPECT_EQ(request.header("accept"), "application/json");
  EXPECT_EQ(request.header("accept-encoding"), "");
}

TEST(PrometheusClient, BearerTokenFileIsReadOnEveryRequest) {
  HttpServer server([](const HttpRequest&) { return HttpResponse{.body = kVectorBody}; });
  const auto dir =
      std::filesystem::path(::testing::TempDir()) / ("promql-token-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto token_file = dir / "token";
  std::ofstream(token_file) << "first\n";
  auto client =
      makeClient(ClientOptions{.base_url = server.url(), .bearer_token_file = token_file});
  ASSERT_TRUE(client->query({.query = "up"}));
  EXPECT_EQ(server.lastRequest().header("authorization"), "Bearer first");
  std::ofstream(token_file) << "rotated";
  ASSERT_TRUE(client->query({.query = "up"}));
  EXPECT_EQ(server.lastRequest().header("authorization"), "Bearer rotated");

  std::filesystem::remove_all(dir);
  auto result = client->query({.query = "up"});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::Config);
  EXPECT_THAT(result.error().message, HasSubstr(token_file.string()));
}

TEST(PrometheusClient, BasicAuth) {
  HttpServer server([](const HttpRequest&) { return HttpResponse{.body = kVectorBody}; });
  auto client =
      makeClient(ClientOptions{.base_url = server.url(), .basic_auth = BasicAuth{"user", "pass"}});
  ASSERT_TRUE(client->query({.query = "up"}));
  EXPECT_EQ(server.lastRequest().header("authorization"), "Basic dXNlcjpwYXNz");  // user:pass
}

TEST(PrometheusClient, RejectsConfigurationsThatCannotWork) {
  auto bad_url = PrometheusClient::create({.base_url = "prometheus:9090"});
  ASSERT_FALSE(bad_url.has_value());
  EXPECT_EQ(bad_url.error().kind, ErrorKind::Config);
  EXPECT_THAT(bad_url.error().message, HasSubstr("prometheus:9090"));

  auto two_auths = PrometheusClient::create(
      {.base_url = "http://x", .bearer_token = "t", .basic_auth = BasicAuth{"u", "p"}});
  ASSERT_FALSE(two_auths.has_value());
  EXPECT_EQ(two_auths.error().kind, ErrorKind::Config);

  auto half_cert = PrometheusClient::create({.base_url = "https://x", .client_cert_file = "c"});
  ASSERT_FALSE(half_cert.has_value());
  EXPECT_EQ(half_cert.error().kind, ErrorKind::Config);

  // A query or a fragment in the base URL would swallow the API's path and parameters.
  for (const char* url : {"http://x/?a=b", "http://x/#f", "http://x?"}) {
    auto with_query = PrometheusClient::create({.base_url = url});
    ASSERT_FALSE(with_query.has_value()) << url;
    EXPECT_EQ(with_query.error().kind, ErrorKind::Config);
    EXPECT_THAT(with_query.error().message, HasSubstr("query or a fragment"));
  }
  EXPECT_FALSE(PrometheusClient::create({.base_url = "http://x", .max_response_bytes = 0}));
}

TEST(PrometheusClient, ClientTimeoutWhenTheServerIsSlow) {
  HttpServer server(
      [](const HttpRequest&) { return HttpResponse{.body = kVectorBody, .hold = true}; });
  auto client = makeClient(ClientOptions{.base_url = server.url(), .timeout = milliseconds(300)});
  const auto started = std::chrono::steady_clock::now();
  auto result = client->query({.query = "slow_query"});
  const auto elapsed = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::ClientTimeout);
  EXPECT_EQ(result.error().http_status, 0);
  EXPECT_THAT(result.error().message, HasSubstr("300ms"));
  EXPECT_THAT(result.error().message, HasSubstr("\"slow_query\""));
  EXPECT_GE(elapsed, milliseconds(250));  // libcurl's timer may fire a hair early
  EXPECT_LT(elapsed, milliseconds(10000));
  EXPECT_TRUE(server.waitForHeld(1, milliseconds(5000)));
}

TEST(PrometheusClient, ConnectionRefusedIsATransportError) {
  const testenv::RefusingPort refusing;
  const std::string url = refusing.url();

  auto client = makeClient(ClientOptions{.base_url = url});
  auto result = client->query({.query = "up"});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::Transport);
  EXPECT_THAT(result.error().message, HasSubstr(url + "/api/v1/query"));
  EXPECT_THAT(result.error().message, HasSubstr("\"up\""));
  EXPECT_EQ(client->stats().failures, 1u);
}

TEST(PrometheusClient, ReusesOneConnectionForSequentialQueries) {
  HttpServer server([](const HttpRequest&) { return HttpResponse{.body = kVectorBody}; });
  auto client = makeClient(server);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(client->query({.query = "up"}));
  EXPECT_EQ(server.connectionsAccepted(), 1);
  const ClientStats stats = client->stats();
  EXPECT_EQ(stats.requests, 20u);
  EXPECT_EQ(stats.connections_opened, 1u);
  EXPECT_EQ(stats.failures, 0u);
  EXPECT_EQ(stats.bytes_received, 20 * kVectorBody.size());
}

TEST(PrometheusClient, ConcurrentCallersShareAPoolOfConnections) {
  HttpServer server([](const HttpRequest&) { return HttpResponse{.body = kVectorBody}; });
  auto client = makeClient(ClientOptions{.base_url = server.url(), .max_idle_connections = 4});
  constexpr int kThreads = 4;
  constexpr int kQueriesPerThread = 25;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kQueriesPerThread; ++i) {
        if (client->query({.query = "up"})) ok.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), kThreads * kQueriesPerThread);
  // At most one connection per concurrent caller; never one per query.
  EXPECT_GE(server.connectionsAccepted(), 1);
  EXPECT_LE(server.connectionsAccepted(), kThreads);
  EXPECT_EQ(client->stats().connections_opened,
            static_cast<uint64_t>(server.connectionsAccepted()));
}

TEST(PrometheusClient, ReconnectsWhenTheServerClosesTheConnection) {
  HttpServer server([](const HttpRequest&) {
    return HttpResponse{.body = kVectorBody, .close_connection = true};
  });
  auto client = makeClient(server);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(client->query({.query = "up"}));
  EXPECT_EQ(server.connectionsAccepted(), 3);
  EXPECT_EQ(client->stats().connections_opened, 3u);
}

}  // namespace
}  // namespace shardscaler::promql
