// What reaches a ShardSet's IngestionAvailable condition and its Events when the Prometheus a
// ShardSet names answers something else than the API: the monitor with the real client against
// a loopback server. Whoever created the ShardSet reads those; they must not read the answer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

#include "shardscaler/ingestion/ingestion_monitor.h"
#include "shardscaler/ingestion/ingestion_status.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/test_kit/test_http_server.h"

namespace shardscaler::ingestion {
namespace ingestion_report_test {
namespace {

using namespace std::chrono_literals;
using test_kit::HttpRequest;
using test_kit::HttpResponse;
using test_kit::HttpServer;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr auto kRealTimeout = 10s;

// The snapshot of the first query of a ShardSet naming `url`, as the real client gets it.
IngestionSnapshot firstSnapshot(const std::string& url) {
  k8s::ManualClock clock;
  std::mutex mutex;
  std::condition_variable done;
  bool answered = false;
  IngestionMonitor monitor(
      clock, nullptr,
      [&](const std::string&) {
        std::lock_guard lock(mutex);
        answered = true;
        done.notify_all();
      },
      IngestionMonitorOptions{.url_policy =
                                  *PrometheusUrlPolicy::make({"http://127.0.0.1:*"}, "")});
  monitor.start();
  IngestionTarget target;
  target.ns = "monitoring";
  target.shard_set = "main";
  target.target_name = "main";
  target.prometheus_url = url;
  monitor.track("monitoring/main", target);
  {
    std::unique_lock lock(mutex);
    EXPECT_TRUE(done.wait_for(lock, kRealTimeout, [&] { return answered; }));
  }
  monitor.stop();
  return monitor.snapshot("monitoring/main").value_or(IngestionSnapshot{});
}

// The condition and the Warning Event that snapshot makes.
std::string reported(const IngestionSnapshot& snapshot) {
  auto condition = ingestionCondition({}, true, "", snapshot, 1, std::chrono::system_clock::now());
  EXPECT_TRUE(condition.has_value());
  if (!condition) return "";
  std::string text = condition->reason + ": " + condition->message;
  for (const auto& event : ingestionEvents(nullptr, *condition)) text += "\n" + event.message;
  return text;
}

TEST(IngestionReport, AnAnswerThatIsNotPrometheusIsDescribedNeverQuoted) {
  HttpServer server([](const HttpRequest&) {
    return HttpResponse{
        .status = 500, .body = "internal page with secret-token-1234", .content_type = "text/html"};
  });
  const IngestionSnapshot snapshot = firstSnapshot(server.url());
  EXPECT_EQ(snapshot.error_reason, kReasonQueryFailed);
  EXPECT_THAT(snapshot.error, HasSubstr("HTTP 500"));
  const std::string text = reported(snapshot);
  EXPECT_THAT(text, HasSubstr("QueryFailed"));
  EXPECT_THAT(text, Not(HasSubstr("secret-token")));
}

TEST(IngestionReport, AnAnswerLargerThanTheCapIsResponseTooLarge) {
  HttpServer server([](const HttpRequest&) {
    return HttpResponse{.body = std::string(std::size_t{9} * 1024 * 1024, ' ')};
  });
  const IngestionSnapshot snapshot = firstSnapshot(server.url());
  EXPECT_EQ(snapshot.error_reason, kReasonResponseTooLarge);
  EXPECT_THAT(reported(snapshot), HasSubstr("larger than 8388608 bytes"));
}

}  // namespace
}  // namespace ingestion_report_test
}  // namespace shardscaler::ingestion
