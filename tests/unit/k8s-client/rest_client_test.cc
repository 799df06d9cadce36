#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "config_test_support.h"
#include "rest_test_support.h"
#include "shardscaler/k8s_client/rest_client.h"
#include "shardscaler/test_kit/test_http_server.h"
#include "shardscaler/testenv/loopback_ports.h"

namespace shardscaler::k8s {
namespace {

using test_kit::HttpExchange;
using test_kit::HttpRequest;
using test_kit::HttpServer;
using testing::configFor;
using ::testing::HasSubstr;
using testing::statusJson;

const Resource kShardSets{"shardscaler.io", "v1alpha1", "shardsets", true};

HttpServer echoServer() {
  return HttpServer([](const HttpRequest& req, HttpExchange& ex) {
    Json answer = {{"kind", "Echo"},
                   {"metadata", {{"name", "x"}, {"resourceVersion", "7"}}},
                   {"method", req.method}};
    ex.respond(req.method == "POST" ? 201 : 200, answer.dump());
  });
}

TEST(RestClient, GetSendsPathCredentialsAndUserAgent) {
  auto server = echoServer();
  RestClient client(configFor(server, "secret-token"));
  auto pod = client.get(resources::pods(), "ns1", "web-0");
  ASSERT_TRUE(pod.has_value()) << pod.error().describe();
  EXPECT_EQ((*pod)["method"], "GET");
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].path, "/api/v1/namespaces/ns1/pods/web-0");
  EXPECT_EQ(requests[0].header("Authorization"), "Bearer secret-token");
  EXPECT_EQ(requests[0].header("Accept"), "application/json");
  EXPECT_EQ(requests[0].header("User-Agent"), "shardscaler");
}

TEST(RestClient, ListEncodesSelectorsAndPaging) {
  auto server = echoServer();
  RestClient client(configFor(server));
  ListOptions opts;
  opts.label_selector = "app in (a,b),tier!=cache";
  opts.field_selector = "metadata.name=x";
  opts.limit = 50;
  opts.continue_token = "abc/+=";
  opts.resource_version = "0";
  opts.resource_version_match = "NotOlderThan";
  ASSERT_TRUE(client.list(resources::statefulSets(), "mon", opts).has_value());
  auto req = server.requests().at(0);
  EXPECT_EQ(req.path, "/apis/apps/v1/namespaces/mon/statefulsets");
  EXPECT_EQ(req.query["labelSelector"], "app in (a,b),tier!=cache");
  EXPECT_EQ(req.query["fieldSelector"], "metadata.name=x");
  EXPECT_EQ(req.query["limit"], "50");
  EXPECT_EQ(req.query["continue"], "abc/+=");
  EXPECT_EQ(req.query["resourceVersion"], "0");
  EXPECT_EQ(req.query["resourceVersionMatch"], "NotOlderThan");
  EXPECT_EQ(req.target.find(' '), std::string::npos);  // sent percent-encoded
}

// Pages of two items each; the continue token names the next page.
HttpServer pagedServer(int pages, bool expire_second_token = false) {
  return HttpServer([=](const HttpRequest& req, HttpExchange& ex) {
    std::string token = req.query.count("continue") ? req.query.at("continue") : "";
    if (expire_second_token && token == "page-1") {
      ex.respond(410, statusJson(410, "Expired", "The provided continue parameter is too old"));
      return;
    }
    bool paged = req.query.count("limit") != 0;
    int page = token.empty() ? 0 : std::stoi(token.substr(5));
    int first = paged ? page * 2 : 0;
    int count = paged ? 2 : pages * 2;
    Json items = Json::array();
    for (int i = first; i < first + count; ++i)
      items.push_back({{"metadata", {{"name", "o" + std::to_string(i)}}}});
    Json meta = {{"resourceVersion", "100"}};
    if (paged && page + 1 < pages) meta["continue"] = "page-" + std::to_string(page + 1);
    ex.respond(200, Json{{"kind", "PodList"}, {"metadata", meta}, {"items", items}}.dump());
  });
}

TEST(RestClient, ListAllFollowsContinueTokens) {
  auto server = pagedServer(3);
  RestClient client(configFor(server));
  ListOptions opts;
  opts.limit = 2;
  auto all = listAll(client, resources::pods(), "ns", opts);
  ASSERT_TRUE(all.has_value()) << all.error().describe();
  ASSERT_EQ((*all)["items"].size(), 6u);
  EXPECT_EQ((*all)["items"][5]["metadata"]["name"], "o5");
  EXPECT_EQ((*all)["metadata"]["resourceVersion"], "100");
  EXPECT_FALSE((*all)["metadata"].contains("continue"));
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].query.count("continue"), 0u);
  EXPECT_EQ(requests[1].query["continue"], "page-1");
  EXPECT_EQ(requests[2].query["continue"], "page-2");
}

TEST(RestClient, ListAllRelistsWhenTheContinueTokenExpired) {
  auto server = pagedServer(3, /*expire_second_token=*/true);
  RestClient client(configFor(server));
  ListOptions opts;
  opts.limit = 2;
  auto all = listAll(client, resources::pods(), "ns", opts);
  ASSERT_TRUE(all.has_value()) << all.error().describe();
  EXPECT_EQ((*all)["items"].size(), 6u);
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[2].query.count("limit"), 0u);  // the fallback is one unpaged list
}

TEST(RestClient, WritesUseTheRightMethodsPathsAndBodies) {
  auto server = echoServer();
  RestClient client(configFor(server));
  Json obj = {{"apiVersion", "shardscaler.io/v1alpha1"},
              {"kind", "ShardSet"},
              {"metadata", {{"name", "main"}, {"namespace", "mon"}, {"resourceVersion", "41"}}},
              {"spec", {{"shards", 3}}}};
  ASSERT_TRUE(client.create(kShardSets, "", obj).has_value());
  ASSERT_TRUE(client.update(kShardSets, "", obj).has_value());
  ASSERT_TRUE(client.update(kShardSets, "mon", obj, "status").has_value());
  ASSERT_TRUE(
      client
          .patch(kShardSets, "mon", "main", PatchType::Merge, {{"spec", {{"shards", 2}}}}, "scale")
          .has_value());
  ASSERT_TRUE(client
                  .patch(resources::statefulSets(), "mon", "sts", PatchType::Json,
                         Json::array({{{"op", "remove"}, {"path", "/metadata/labels/a"}}}))
                  .has_value());
  ASSERT_TRUE(client
                  .patch(resources::statefulSets(), "mon", "sts", PatchType::StrategicMerge,
                         {{"metadata", {{"labels", {{"a", "b"}}}}}})
                  .has_value());
  DeleteOptions del;
  del.propagation_policy = "Foreground";
  del.precondition_uid = "uid-1";
  del.precondition_resource_version = "41";
  del.grace_period_seconds = 0;
  ASSERT_TRUE(client.remove(resources::statefulSets(), "mon", "sts", del).has_value());

  auto r = server.requests();
  ASSERT_EQ(r.size(), 7u);
  EXPECT_EQ(r[0].method, "POST");
  EXPECT_EQ(r[0].path, "/apis/shardscaler.io/v1alpha1/namespaces/mon/shardsets");
  EXPECT_EQ(r[0].header("Content-Type"), "application/json");
  EXPECT_EQ(Json::parse(r[0].body), obj);
  EXPECT_EQ(r[1].method, "PUT");
  EXPECT_EQ(r[1].path, "/apis/shardscaler.io/v1alpha1/namespaces/mon/shardsets/main");
  EXPECT_EQ(Json::parse(r[1].body)["metadata"]["resourceVersion"], "41");
  EXPECT_EQ(r[2].path, "/apis/shardscaler.io/v1alpha1/namespaces/mon/shardsets/main/status");
  EXPECT_EQ(r[3].method, "PATCH");
  EXPECT_EQ(r[3].path, "/apis/shardscaler.io/v1alpha1/namespaces/mon/shardsets/main/scale");
  EXPECT_EQ(r[3].header("Content-Type"), "application/merge-patch+json");
  EXPECT_EQ(r[4].header("Content-Type"), "application/json-patch+json");
  EXPECT_TRUE(Json::parse(r[4].body).is_array());
  EXPECT_EQ(r[5].header("Content-Type"), "application/strategic-merge-patch+json");
  EXPECT_EQ(r[6].method, "DELETE");
  EXPECT_EQ(r[6].path, "/apis/apps/v1/namespaces/mon/statefulsets/sts");
  Json del_body = Json::parse(r[6].body);
  EXPECT_EQ(del_body["kind"], "DeleteOptions");
  EXPECT_EQ(del_body["propagationPolicy"], "Foreground");
  EXPECT_EQ(del_body["preconditions"]["uid"], "uid-1");
  EXPECT_EQ(del_body["preconditions"]["resourceVersion"], "41");
  EXPECT_EQ(del_body["gracePeriodSeconds"], 0);
}

TEST(RestClient, UpdateWithoutNameIsRejectedLocally) {
  auto server = echoServer();
  RestClient client(configFor(server));
  auto result = client.update(kShardSets, "mon", Json{{"metadata", Json::object()}});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::Invalid);
  EXPECT_EQ(server.requests().size(), 0u);
}

struct StatusCase {
  int code;
  const char* reason;
  ErrorKind kind;
};

TEST(RestClient, StatusResponsesBecomeTypedErrors) {
  const std::vector<StatusCase> cases = {
      {404, "NotFound", ErrorKind::NotFound},
      {409, "AlreadyExists", ErrorKind::AlreadyExists},
      {409, "Conflict", ErrorKind::Conflict},
      {410, "Gone", ErrorKind::Gone},
      {403, "Forbidden", ErrorKind::Forbidden},
      {401, "Unauthorized", ErrorKind::Unauthorized},
      {422, "Invalid", ErrorKind::Invalid},
      {400, "BadRequest", ErrorKind::BadRequest},
      {429, "TooManyRequests", ErrorKind::TooManyRequests},
      {500, "InternalError", ErrorKind::ServerError},
      {504, "Timeout", ErrorKind::Timeout},
  };
  for (const auto& c : cases) {
    HttpServer server([&](const HttpRequest&, HttpExchange& ex) {
      ex.respond(c.code, statusJson(c.code, c.reason, std::string("message for ") + c.reason));
    });
    RestClient client(configFor(server));
    auto result = client.get(resources::pods(), "ns", "p");
    ASSERT_FALSE(result.has_value()) << c.reason;
    EXPECT_EQ(result.error().kind, c.kind) << c.reason;
    EXPECT_EQ(result.error().http_status, c.code) << c.reason;
    EXPECT_EQ(result.error().reason, c.reason);
    EXPECT_EQ(result.error().message, std::string("message for ") + c.reason);
  }
}

TEST(RestClient, TooManyRequestsCarriesRetryAfter) {
  HttpServer server([](const HttpRequest&, HttpExchange& ex) {
    ex.respond(429,
               statusJson(429, "TooManyRequests", "Too many requests, please try again later."),
               {{"Retry-After", "4"}});
  });
  RestClient client(configFor(server));
  auto result = client.list(resources::pods(), "");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::TooManyRequests);
  EXPECT_EQ(result.error().retry_after, std::chrono::seconds(4));
}

TEST(RestClient, ForbiddenKeepsTheServersWordsOrNamesVerbAndPath) {
  const std::string server_message =
      "pods is forbidden: User \"alice\" cannot list resource \"pods\" in API group \"\" in "
      "the namespace \"mon\"";
  std::atomic<bool> send_status{true};
  HttpServer server([&](const HttpRequest&, HttpExchange& ex) {
    if (send_status) {
      ex.respond(403, statusJson(403, "Forbidden", server_message));
    } else {
      ex.respond(403, "Forbidden by policy\n", {}, "text/plain");
    }
  });
  RestClient client(configFor(server));
  auto with_status = client.list(resources::pods(), "mon");
  ASSERT_FALSE(with_status.has_value());
  EXPECT_EQ(with_status.error().describe(), "Forbidden (403): " + server_message);

  send_status = false;
  auto without_status = client.list(resources::pods(), "mon");
  ASSERT_FALSE(without_status.has_value());
  EXPECT_EQ(without_status.error().kind, ErrorKind::Forbidden);
  EXPECT_EQ(without_status.error().message,
            "list pods/v1 (GET /api/v1/namespaces/mon/pods): the server answered 403 Forbidden: "
            "Forbidden by policy");
}

TEST(RestClient, NonJsonSuccessIsADecodeError) {
  HttpServer server([](const HttpRequest& req, HttpExchange& ex) {
    ex.respond(200, req.path == "/readyz" ? "ok" : "<html>", {}, "text/plain");
  });
  RestClient client(configFor(server));
  auto result = client.get(resources::pods(), "ns", "p");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::Decode);
  auto ready = client.getPath("/readyz");
  ASSERT_TRUE(ready.has_value()) << ready.error().describe();
  EXPECT_EQ(*ready, "ok");
}

TEST(RestClient, SequentialRequestsReuseOneConnection) {
  auto server = echoServer();
  RestClient client(configFor(server));
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(client.get(resources::pods(), "ns", "p").has_value());
  EXPECT_EQ(server.connectionsAccepted(), 1);
}

TEST(RestClient, ConcurrentRequestsShareAFewConnections) {
  auto server = echoServer();
  RestClientOptions options;
  options.max_idle_connections = 4;
  RestClient client(configFor(server), options);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        if (!client.get(resources::pods(), "ns", "p")) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(server.requests().size(), 100u);
  EXPECT_LE(server.connectionsAccepted(), 4);
}

TEST(RestClient, RequestTimeoutIsATimeoutError) {
  HttpServer server([](const HttpRequest&, HttpExchange& ex) {
    ex.holdUntilClientCloses(std::chrono::seconds(10));
  });
  KubeConfig config = configFor(server);
  config.request_timeout = std::chrono::milliseconds(300);
  RestClient client(config);
  auto started = std::chrono::steady_clock::now();
  auto result = client.get(resources::pods(), "ns", "p");
  auto elapsed = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::Timeout);
  EXPECT_THAT(result.error().message,
              HasSubstr("get pods/v1 (GET /api/v1/namespaces/ns/pods/p): no complete answer"));
  EXPECT_LT(elapsed, std::chrono::seconds(5));
}

TEST(RestClient, ServerDownIsOneClearTransportError) {
  KubeConfig config;
  const testenv::RefusingPort refusing;  // a server that is down
  config.server = refusing.url("http");
  RestClient client(config);
  auto result = client.list(resources::statefulSets(), "mon");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::Transport);
  EXPECT_EQ(result.error().http_status, 0);
  EXPECT_THAT(
      result.error().message,
      HasSubstr("list statefulsets.apps/v1 (GET /apis/apps/v1/namespaces/mon/statefulsets): "
                "cannot reach the API server " +
                config.server + " ("));
  EXPECT_THAT(result.error().describe(), HasSubstr("Transport: "));
}

TEST(RestClient, TokenFileIsReReadAfterAMinuteOrAfterA401) {
  test_kit::TempDir dir("k8srest-");
  auto token_file = dir.write("token", "one\n");
  bool reject = false;
  std::mutex mutex;
  HttpServer server([&](const HttpRequest&, HttpExchange& ex) {
    std::lock_guard lock(mutex);
    if (reject) {
      reject = false;
      ex.respond(401, statusJson(401, "Unauthorized", "Unauthorized"));
    } else {
      ex.respond(200, "{}");
    }
  });
  KubeConfig config = configFor(server, "");
  config.token_file = token_file.string();
  auto clock = std::make_shared<ManualClock>();
  RestClientOptions options;
  options.clock = clock;
  RestClient client(config, options);
  auto last_token = [&] { return server.requests().back().header("Authorization"); };

  ASSERT_TRUE(client.get(resources::pods(), "ns", "p").has_value());
  EXPECT_EQ(last_token(), "Bearer one");
  dir.write("token", "two");
  clock->advance(std::chrono::seconds(59));
  ASSERT_TRUE(client.get(resources::pods(), "ns", "p").has_value());
  EXPECT_EQ(last_token(), "Bearer one");  // cached for a minute
  clock->advance(std::chrono::seconds(1));
  ASSERT_TRUE(client.get(resources::pods(), "ns", "p").has_value());
  EXPECT_EQ(last_token(), "Bearer two");

  dir.write("token", "three");
  {
    std::lock_guard lock(mutex);
    reject = true;
  }
  auto rejected = client.get(resources::pods(), "ns", "p");
  ASSERT_FALSE(rejected.has_value());
  EXPECT_EQ(rejected.error().kind, ErrorKind::Unauthorized);
  ASSERT_TRUE(client.get(resources::pods(), "ns", "p").has_value());
  EXPECT_EQ(last_token(), "Bearer three");  // no clock movement needed after a 401

  // A token file that disappears keeps the last good token.
  std::filesystem::remove(token_file);
  clock->advance(std::chrono::minutes(2));
  ASSERT_TRUE(client.get(resources::pods(), "ns", "p").has_value());
  EXPECT_EQ(last_token(), "Bearer three");
}

TEST(RestClient, MissingTokenFileFailsTheRequestWithAConfigError) {
  auto server = echoServer();
  KubeConfig config = configFor(server, "");
  config.token_file = "/nonexistent/token";
  RestClient client(config);
  auto result = client.get(resources::pods(), "ns", "p");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::Config);
  EXPECT_THAT(result.error().message, HasSubstr("cannot read token file \"/nonexistent/token\""));
  EXPECT_EQ(server.requests().size(), 0u);
}

TEST(RestClient, ObserverSeesVerbResourceStatusAndLatency) {
  HttpServer server([](const HttpRequest& req, HttpExchange& ex) {
    if (req.method == "DELETE") {
      ex.respond(404, statusJson(404, "NotFound", "not found"));
    } else {
      ex.respond(200, "{}");
    }
  });
  std::mutex mutex;
  std::vector<std::tuple<std::string, std::string, int>> seen;
  RestClientOptions options;
  options.observer = [&](const RequestRecord& r) {
    std::lock_guard lock(mutex);
    seen.emplace_back(std::string(r.verb), std::string(r.resource), r.http_status);
    EXPECT_GE(r.latency.count(), 0);
  };
  RestClient client(configFor(server), options);
  (void)client.list(resources::statefulSets(), "ns");
  (void)client.remove(resources::statefulSets(), "ns", "x");
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0],
            std::make_tuple(std::string("list"), std::string("statefulsets.apps/v1"), 200));
  EXPECT_EQ(seen[1],
            std::make_tuple(std::string("delete"), std::string("statefulsets.apps/v1"), 404));
}

}  // namespace
}  // namespace shardscaler::k8s

namespace shardscaler::k8s {
namespace {

// metadata_only asks for PartialObjectMetadataList (plain JSON as the fallback), and `fields`
// trims each item as it is decoded; the list's own metadata is kept whole.
TEST(RestClient, MetadataOnlyListAsksForPartialObjectMetadataAndTrimsItems) {
  test_kit::HttpServer server([](const test_kit::HttpRequest&, test_kit::HttpExchange& ex) {
    ex.respond(200, R"({"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1",
      "metadata":{"resourceVersion":"77","continue":"next"},
      "items":[{"kind":"PartialObjectMetadata","metadata":{"name":"a","uid":"1",
                "managedFields":[{"manager":"x"}]}},
               {"kind":"PartialObjectMetadata","metadata":{"name":"b","uid":"2"}}]})");
  });
  RestClient client(testing::configFor(server));
  auto fields = std::make_shared<FieldMask>(FieldMask::keepAll());
  fields->drop({"metadata", "managedFields"}).drop({"metadata", "uid"});
  ListOptions opts;
  opts.metadata_only = true;
  opts.fields = fields;
  auto list = client.list(resources::statefulSets(), "mon", opts);
  ASSERT_TRUE(list.has_value()) << list.error().describe();
  EXPECT_EQ((*list)["metadata"]["continue"], "next");
  EXPECT_EQ((*list)["items"], Json::parse(R"([
    {"kind":"PartialObjectMetadata","metadata":{"name":"a"}},
    {"kind":"PartialObjectMetadata","metadata":{"name":"b"}}])"));
  EXPECT_EQ(server.requests().at(0).header("Accept"),
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json");

  ASSERT_TRUE(client.list(resources::statefulSets(), "mon").has_value());
  EXPECT_EQ(server.requests().at(1).header("Accept"), "application/json");
}

TEST(RestClient, MetadataOnlyWatchAsksForPartialObjectMetadata) {
  test_kit::HttpServer server([](const test_kit::HttpRequest&, test_kit::HttpExchange& ex) {
    ex.startChunked(200);
    ex.chunk(R"({"type":"ADDED","object":{"kind":"PartialObjectMetadata","metadata":{"name":"a",)"
             R"("labels":{"keep":"1","drop":"2"}}}})"
             "\n");
    ex.endChunked();
  });
  RestClient client(testing::configFor(server));
  auto fields = std::make_shared<FieldMask>(FieldMask::keepNone());
  fields->keep({"metadata", "name"}).keep({"metadata", "labels", "keep"});
  WatchOptions opts;
  opts.metadata_only = true;
  opts.fields = fields;
  std::vector<Json> objects;
  auto result = client.watch(resources::statefulSets(), "mon", opts, [&](WatchEvent&& e) {
    objects.push_back(std::move(e.object));
    return true;
  });
  ASSERT_TRUE(result.has_value()) << result.error().describe();
  ASSERT_EQ(objects.size(), 1u);
  EXPECT_EQ(objects[0], Json::parse(R"({"metadata":{"name":"a","labels":{"keep":"1"}}})"));
  EXPECT_EQ(server.requests().at(0).header("Accept"),
            "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json");
}

// A patch whose answer is read in part asks for PartialObjectMetadata and decodes only the
// fields asked for; the plain patch() keeps asking for, and decoding, the whole object.
TEST(RestClient, PatchReadingAsksForMetadataAndTrimsTheAnswer) {
  test_kit::HttpServer server([](const test_kit::HttpRequest&, test_kit::HttpExchange& ex) {
    ex.respond(200, R"({"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1",
      "metadata":{"name":"s","namespace":"mon","resourceVersion":"9",
                  "labels":{"a":"b"},"managedFields":[{"manager":"x"}]}})");
  });
  RestClient client(testing::configFor(server));
  auto fields = std::make_shared<FieldMask>(FieldMask::keepNone());
  fields->keep({"metadata", "name"}).keep({"metadata", "resourceVersion"});
  const Json patch{{"metadata", {{"labels", {{"a", "b"}}}}}};
  auto answer = client.patchReading(resources::statefulSets(), "mon", "s", PatchType::Merge, patch,
                                    "", {.metadata_only = true, .fields = fields});
  ASSERT_TRUE(answer.has_value()) << answer.error().describe();
  EXPECT_EQ(*answer, Json::parse(R"({"metadata":{"name":"s","resourceVersion":"9"}})"));
  const auto sent = server.requests().at(0);
  EXPECT_EQ(sent.method, "PATCH");
  EXPECT_EQ(sent.header("Accept"),
            "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json");
  EXPECT_EQ(Json::parse(sent.body), patch);

  auto whole = client.patch(resources::statefulSets(), "mon", "s", PatchType::Merge, patch);
  ASSERT_TRUE(whole.has_value());
  EXPECT_TRUE((*whole)["metadata"].contains("managedFields"));
  EXPECT_EQ(server.requests().at(1).header("Accept"), "application/json");
}

// Every write names the client's field manager, the way the shard guard recognises shardscaler's
// own writes; reads and deletes carry none (DeleteOptions have no field manager).
TEST(RestClient, WritesNameTheFieldManager) {
  test_kit::HttpServer server([](const test_kit::HttpRequest&, test_kit::HttpExchange& ex) {
    ex.respond(200, R"({"metadata":{"name":"s","namespace":"mon"}})");
  });
  RestClient client(testing::configFor(server), {.field_manager = "shardscaler"});
  const Json object{{"metadata", {{"name", "s"}, {"namespace", "mon"}}}};
  ASSERT_TRUE(client.create(resources::statefulSets(), "mon", object));
  ASSERT_TRUE(client.update(resources::statefulSets(), "mon", object));
  ASSERT_TRUE(client.patch(resources::statefulSets(), "mon", "s", PatchType::Merge, object));
  ASSERT_TRUE(client.remove(resources::statefulSets(), "mon", "s"));
  ASSERT_TRUE(client.get(resources::statefulSets(), "mon", "s"));
  const auto sent = server.requests();
  ASSERT_EQ(sent.size(), 5u);
  EXPECT_EQ(sent[0].target, "/apis/apps/v1/namespaces/mon/statefulsets?fieldManager=shardscaler");
  EXPECT_EQ(sent[1].target, "/apis/apps/v1/namespaces/mon/statefulsets/s?fieldManager=shardscaler");
  EXPECT_EQ(sent[2].target, "/apis/apps/v1/namespaces/mon/statefulsets/s?fieldManager=shardscaler");
  EXPECT_EQ(sent[3].target, "/apis/apps/v1/namespaces/mon/statefulsets/s");
  EXPECT_EQ(sent[4].target, "/apis/apps/v1/namespaces/mon/statefulsets/s");

  RestClient unnamed(testing::configFor(server));
  ASSERT_TRUE(unnamed.patch(resources::statefulSets(), "mon", "s", PatchType::Merge, object));
  EXPECT_EQ(server.requests().back().target, "/apis/apps/v1/namespaces/mon/statefulsets/s");
}

TEST(RestClient, MaskedListOfBrokenJsonIsADecodeError) {
  test_kit::HttpServer server([](const test_kit::HttpRequest&, test_kit::HttpExchange& ex) {
    ex.respond(200, R"({"items":[{"metadata":)");
  });
  RestClient client(testing::configFor(server));
  ListOptions opts;
  opts.fields = std::make_shared<FieldMask>(FieldMask::keepNone());
  auto list = client.list(resources::pods(), "", opts);
  ASSERT_FALSE(list.has_value());
  EXPECT_EQ(list.error().kind, ErrorKind::Decode);
  EXPECT_EQ(list.error().http_status, 200);
  EXPECT_THAT(list.error().message, ::testing::HasSubstr("list pods/v1"));
}

}  // namespace
}  // namespace shardscaler::k8s
