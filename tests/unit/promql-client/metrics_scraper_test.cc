#include "shardscaler/promql_client/metrics_scraper.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "shardscaler/test_kit/test_http_server.h"

namespace shardscaler::promql {
namespace {

using namespace std::chrono_literals;
using test_kit::HttpRequest;
using test_kit::HttpResponse;
using test_kit::HttpServer;
using ::testing::HasSubstr;

constexpr std::string_view kTextFormat = "text/plain; version=0.0.4; charset=utf-8";

std::unique_ptr<MetricsScraper> scraper(ScraperOptions options = {}) {
  auto made = MetricsScraper::create(std::move(options));
  EXPECT_TRUE(made) << made.error().describe();
  return std::move(*made);
}

ScrapeTarget at(const HttpServer& server) {
  return {.address = "127.0.0.1", .port = static_cast<uint16_t>(server.port())};
}

HttpResponse text(std::string body) {
  return {.body = std::move(body), .content_type = std::string(kTextFormat)};
}

TEST(MetricsScraper, GetsMetricsAsksForTheTextFormatAndKeepsWhatIsAskedFor) {
  HttpServer server(
      [](const HttpRequest&) { return text("# TYPE a counter\na{x=\"1\"} 3\nb 4\n"); });
  auto samples = scraper()->scrape(at(server), [](std::string_view n) { return n == "a"; });
  ASSERT_TRUE(samples) << samples.error().describe();
  ASSERT_EQ(samples->size(), 1u);
  EXPECT_EQ((*samples)[0].value, 3);
  const HttpRequest request = server.lastRequest();
  EXPECT_EQ(request.method, "GET");
  EXPECT_EQ(request.target, "/metrics");
  EXPECT_EQ(request.header("accept"), "text/plain;version=0.0.4");
  EXPECT_EQ(request.header("authorization"), "");
}

TEST(MetricsScraper, RefusesAnythingButAnIpAddressAPortAndAPlainPath) {
  auto s = scraper();
  for (const ScrapeTarget& target :
       {ScrapeTarget{.address = "example.com", .port = 9090},
        ScrapeTarget{.address = "127.0.0.1/x", .port = 9090},
        ScrapeTarget{.address = "127.0.0.1", .port = 0},
        ScrapeTarget{.address = "127.0.0.1", .port = 9090, .path = "/metrics?x=1"},
        ScrapeTarget{.address = "127.0.0.1", .port = 9090, .path = "metrics"},
        ScrapeTarget{.address = "127.0.0.1",
        .port = 9090,
        .tls = ScrapeTls{.client_cert_file = "/c.pem"}}}) {
    auto result = s->scrape(target, {});
    ASSERT_FALSE(result) << describeTarget(target);
    EXPECT_EQ(result.error().kind, ErrorKind::Config) << result.error().describe();
  }
  EXPECT_EQ(describeTarget({.address = "fd00::1", .port = 9090, .tls = ScrapeTls{}}),
            "https://[fd00::1]:9090/metrics");
}

TEST(MetricsScraper, ABodyPastTheCapIsNotRead) {
  HttpServer server([](const HttpRequest&) { return text(std::string(4096, '#') + "\n"); });
  auto result = scraper({.max_response_bytes = 1024})->scrape(at(server), {});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::ResponseTooLarge) << result.error().describe();
}

TEST(MetricsScraper, AServerThatDoesNotAnswerInTimeIsATimeout) {
  HttpServer server([](const HttpRequest&) {
    HttpResponse r = text("a 1\n");
    r.hold = true;
    return r;
  });
  auto result = scraper({.timeout = 300ms})->scrape(at(server), {});
  server.releaseHeld();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::ClientTimeout) << result.error().describe();
}

TEST(MetricsScraper, OtherStatusesTypesAndBodiesAreErrorsThatNeverQuoteTheBody) {
  HttpServer server([](const HttpRequest& request) -> HttpResponse {
    if (request.target == "/status")
      return {.status = 302, .body = "s3cr3t", .headers = {{"Location", "/metrics"}}};
    if (request.target == "/json") return {.body = "{\"s3cr3t\":1}"};
    return text("a{token=\"s3cr3t\" 1\n");
  });
  auto s = scraper();
  ScrapeTarget target = at(server);
  target.path = "/status";
  auto redirected = s->scrape(target, {});
  ASSERT_FALSE(redirected);
  EXPECT_EQ(redirected.error().kind, ErrorKind::Http);
  EXPECT_EQ(redirected.error().http_status, 302);
  EXPECT_EQ(server.requests().size(), 1u) << "a redirect was followed";
  target.path = "/json";
  auto json = s->scrape(target, {});
  ASSERT_FALSE(json);
  EXPECT_EQ(json.error().kind, ErrorKind::Decode);
  EXPECT_THAT(json.error().message, HasSubstr("application/json"));
  target.path = "/metrics";
  auto garbled = s->scrape(target, {});
  ASSERT_FALSE(garbled);
  EXPECT_EQ(garbled.error().kind, ErrorKind::Decode);
  EXPECT_THAT(garbled.error().message, HasSubstr("line 1: labels must be separated by ','"));
  for (const auto* e : {&redirected.error(), &json.error(), &garbled.error()}) {
    EXPECT_THAT(e->describe(), ::testing::Not(HasSubstr("s3cr3t")));
  }
}

TEST(MetricsScraper, NothingListeningIsATransportError) {
  int port = 0;
  {
    HttpServer gone([](const HttpRequest&) { return text(""); });
    port = gone.port();
  }
  auto result =
      scraper()->scrape({.address = "127.0.0.1", .port = static_cast<uint16_t>(port)}, {});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::Transport) << result.error().describe();
}

}  // namespace
}  // namespace shardscaler::promql
