#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "rest_test_support.h"
#include "shardscaler/k8s_client/rest_client.h"
#include "shardscaler/test_kit/test_http_server.h"

namespace shardscaler::k8s {
namespace {

using test_kit::HttpExchange;
using test_kit::HttpRequest;
using test_kit::HttpServer;
using testing::configFor;
using ::testing::HasSubstr;
using testing::statusJson;

std::string event(const std::string& type, const std::string& name, const std::string& rv) {
  return Json{{"type", type},
              {"object",
               {{"kind", "Pod"},
                {"metadata", {{"name", name}, {"resourceVersion", rv}}},
                {"note", "ünïcödé {[\"x\"]}"}}}}
             .dump() +
         "\n";
}

// Collects events; lets a test wait (bounded) until some have arrived.
struct EventLog {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<WatchEvent> events;

  bool add(WatchEvent&& e) {
    std::lock_guard lock(mutex);
    events.push_back(std::move(e));
    changed.notify_all();
    return true;
  }
  bool waitFor(size_t n, std::chrono::milliseconds limit) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, limit, [&] { return events.size() >= n; });
  }
  size_t size() {
    std::lock_guard lock(mutex);
    return events.size();
  }
};

TEST(RestWatch, EventsSplitAtAwkwardBoundariesArriveWhole) {
  std::string stream =
      event("ADDED", "a", "10") + event("MODIFIED", "a", "11") +
      R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"12"}}})"
      "\n" +
      event("DELETED", "a", "13");
  HttpServer server([&](const HttpRequest&, HttpExchange& ex) {
    ex.startChunked(200);
    // Cuts inside a key, inside a two-byte UTF-8 character, between an event's closing brace
    // and its newline, and one chunk spanning the end of one event and the start of the next.
    size_t utf8 = stream.find("ü") + 1;
    std::vector<size_t> cuts = {
        3, 17, utf8, stream.find('\n') - 1, stream.find('\n') + 9, stream.size() - 5};
    size_t from = 0;
    for (size_t cut : cuts) {
      ex.chunk(std::string_view(stream).substr(from, cut - from));
      from = cut;
    }
    ex.chunk(std::string_view(stream).substr(from));
    ex.endChunked();
  });
  RestClient client(configFor(server));
  EventLog log;
  WatchOptions opts;
  opts.resource_version = "9";
  opts.label_selector = "app=x";
  opts.timeout_seconds = 120;
  auto result = client.watch(resources::pods(), "ns", opts,
                             [&](WatchEvent&& e) { return log.add(std::move(e)); });
  ASSERT_TRUE(result.has_value()) << result.error().describe();
  ASSERT_EQ(log.events.size(), 4u);
  EXPECT_EQ(log.events[0].type, WatchEventType::Added);
  EXPECT_EQ(log.events[0].object["note"], "ünïcödé {[\"x\"]}");
  EXPECT_EQ(log.events[1].type, WatchEventType::Modified);
  EXPECT_EQ(log.events[2].type, WatchEventType::Bookmark);
  EXPECT_EQ(log.events[2].object["metadata"]["resourceVersion"], "12");
  EXPECT_EQ(log.events[3].type, WatchEventType::Deleted);
  EXPECT_EQ(log.events[3].object["metadata"]["resourceVersion"], "13");

  auto req = server.requests().at(0);
  EXPECT_EQ(req.path, "/api/v1/namespaces/ns/pods");
  EXPECT_EQ(req.query["watch"], "true");
  EXPECT_EQ(req.query["resourceVersion"], "9");
  EXPECT_EQ(req.query["labelSelector"], "app=x");
  EXPECT_EQ(req.query["allowWatchBookmarks"], "true");
  EXPECT_EQ(req.query["timeoutSeconds"], "120");
}

TEST(RestWatch, ErrorEventWithStatus410IsGone) {
  HttpServer server([](const HttpRequest&, HttpExchange& ex) {
    ex.startChunked(200);
    ex.chunk(event("ADDED", "a", "5"));
    ex.chunk(
        R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure",)"
        R"json("message":"too old resource version: 5 (100)","reason":"Expired","code":410}})json"
        "\n");
    ex.chunk(event("ADDED", "never-delivered", "101"));
    ex.endChunked();
  });
  RestClient client(configFor(server));
  EventLog log;
  auto result = client.watch(resources::pods(), "ns", {},
                             [&](WatchEvent&& e) { return log.add(std::move(e)); });
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::Gone);
  EXPECT_EQ(result.error().http_status, 410);
  EXPECT_EQ(result.error().message, "too old resource version: 5 (100)");
  EXPECT_EQ(log.events.size(), 1u);  // the ERROR event is not handed to the handler
}

TEST(RestWatch, HttpStatus410IsGoneToo) {
  HttpServer server([](const HttpRequest&, HttpExchange& ex) {
    ex.respond(410, statusJson(410, "Gone", "too old resource version: 1 (2)"));
  });
  RestClient client(configFor(server));
  auto result = client.watch(resources::pods(), "", {}, [](WatchEvent&&) { return true; });
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::Gone);
  EXPECT_EQ(result.error().message, "too old resource version: 1 (2)");
}

TEST(RestWatch, ForbiddenWatchKeepsTheServersMessage) {
  const std::string message =
      "statefulsets.apps is forbidden: User \"bob\" cannot watch resource \"statefulsets\"";
  HttpServer server([&](const HttpRequest&, HttpExchange& ex) {
    ex.respond(403, statusJson(403, "Forbidden", message));
  });
  RestClient client(configFor(server));
  auto result = client.watch(resources::statefulSets(), "", {}, [](WatchEvent&&) { return true; });
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::Forbidden);
  EXPECT_EQ(result.error().message, message);
}

TEST(RestWatch, StopFlagEndsAnIdleWatchWithinASecond) {
  HttpServer server([](const HttpRequest&, HttpExchange& ex) {
    ex.startChunked(200);
    ex.chunk(event("ADDED", "a", "1"));
    ex.holdUntilClientCloses(std::chrono::seconds(20));
  });
  RestClient client(configFor(server));
  EventLog log;
  std::atomic<bool> stop{false};
  auto watching = std::async(std::launch::async, [&] {
    return client.watch(
        resources::pods(), "ns", {}, [&](WatchEvent&& e) { return log.add(std::move(e)); }, &stop);
  });
  ASSERT_TRUE(log.waitFor(1, std::chrono::seconds(10)));
  auto stopped_at = std::chrono::steady_clock::now();
  stop.store(true);
  ASSERT_EQ(watching.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  auto took = std::chrono::steady_clock::now() - stopped_at;
  auto result = watching.get();
  EXPECT_TRUE(result.has_value()) << result.error().describe();
  EXPECT_LT(took, std::chrono::milliseconds(1500));
}

TEST(RestWatch, StopFlagAlreadySetSendsNothing) {
  HttpServer server([](const HttpRequest&, HttpExchange& ex) { ex.respond(200, ""); });
  RestClient client(configFor(server));
  std::atomic<bool> stop{true};
  auto result = client.watch(
      resources::pods(), "", {}, [](WatchEvent&&) { return true; }, &stop);
  EXPECT_TRUE(result.has_value());
  EXPECT_EQ(server.requests().size(), 0u);
}

TEST(RestWatch, HandlerReturningFalseEndsTheWatch) {
  HttpServer server([](const HttpRequest&, HttpExchange& ex) {
    ex.startChunked(200);
    ex.chunk(event("ADDED", "a", "1") + event("ADDED", "b", "2"));
    ex.holdUntilClientCloses(std::chrono::seconds(20));
  });
  RestClient client(configFor(server));
  int seen = 0;
  auto result = client.watch(resources::pods(), "", {}, [&](WatchEvent&&) {
    ++seen;
    return false;
  });
  EXPECT_TRUE(result.has_value());
  EXPECT_EQ(seen, 1);
}

TEST(RestWatch, HandlerExceptionsPropagate) {
  HttpServer server([](const HttpRequest&, HttpExchange& ex) {
    ex.startChunked(200);
    ex.chunk(event("ADDED", "a", "1"));
    ex.holdUntilClientCloses(std::chrono::seconds(20));
  });
  RestClient client(configFor(server));
  EXPECT_THROW((void)client.watch(resources::pods(), "", {},
                                  [](WatchEvent&&) -> bool { throw std::runtime_error("boom"); }),
               std::runtime_error);
}

TEST(RestWatch, SilentConnectionIsDetectedAsDead) {
  HttpServer server([](const HttpRequest&, HttpExchange& ex) {
    ex.startChunked(200);
    ex.holdUntilClientCloses(std::chrono::seconds(20));
  });
  RestClient client(configFor(server));
  WatchOptions opts;
  opts.idle_timeout_seconds = 1;
  auto started = std::chrono::steady_clock::now();
  auto result = client.watch(resources::pods(), "ns", opts, [](WatchEvent&&) { return true; });
  auto took = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::Timeout);
  EXPECT_THAT(result.error().message, HasSubstr("for 1 s; the connection is considered dead"));
  EXPECT_LT(took, std::chrono::seconds(5));
}

TEST(RestWatch, StreamEndingMidEventIsATransportError) {
  HttpServer server([](const HttpRequest&, HttpExchange& ex) {
    ex.startChunked(200);
    ex.chunk(event("ADDED", "a", "1") + R"({"type":"MODIFIED","obj)");
    ex.endChunked();
  });
  RestClient client(configFor(server));
  EventLog log;
  auto result = client.watch(resources::pods(), "", {},
                             [&](WatchEvent&& e) { return log.add(std::move(e)); });
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::Transport);
  EXPECT_THAT(result.error().message, HasSubstr("ended in the middle of an event"));
  EXPECT_EQ(log.events.size(), 1u);
}

TEST(RestWatch, ConnectionDroppedMidStreamIsATransportError) {
  HttpServer server([](const HttpRequest&, HttpExchange& ex) {
    ex.startChunked(200);
    ex.chunk(event("ADDED", "a", "1"));
    ex.closeAfter();  // no terminating chunk: the body is cut
  });
  RestClient client(configFor(server));
  auto result = client.watch(resources::pods(), "", {}, [](WatchEvent&&) { return true; });
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::Transport);
  EXPECT_THAT(result.error().message, HasSubstr("watch pods/v1 (GET /api/v1/pods?watch=true"));
}

TEST(RestWatch, GarbageInTheStreamIsADecodeError) {
  HttpServer server([](const HttpRequest&, HttpExchange& ex) {
    ex.startChunked(200);
    ex.chunk("<html>oops</html>");
    ex.endChunked();
  });
  RestClient client(configFor(server));
  auto result = client.watch(resources::pods(), "", {}, [](WatchEvent&&) { return true; });
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::Decode);
}

TEST(RestWatch, ObserverSeesTheWatchWhenItEnds) {
  HttpServer server([](const HttpRequest&, HttpExchange& ex) {
    ex.startChunked(200);
    ex.endChunked();
  });
  std::vector<std::string> verbs;
  RestClientOptions options;
  options.observer = [&](const RequestRecord& r) {
    verbs.emplace_back(r.verb);
    EXPECT_EQ(r.http_status, 200);
  };
  RestClient client(configFor(server), options);
  ASSERT_TRUE(client.watch(resources::pods(), "", {}, [](WatchEvent&&) { return true; }));
  EXPECT_EQ(verbs, std::vector<std::string>{"watch"});
}

}  // namespace
}  // namespace shardscaler::k8s
