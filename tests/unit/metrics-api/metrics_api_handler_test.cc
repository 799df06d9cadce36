// One request end to end through the handler: 401 before anything else, 403 from the
// SubjectAccessReview, the metric values and their fail-safe errors, discovery and OpenAPI; and
// the front proxy settings a ConfigMap change publishes.
#include "shardscaler/metrics_api/metrics_api_handler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/metrics_api/front_proxy_config_watch.h"

#include "../certificates/tls_test_support.h"

namespace shardscaler::metrics_api {
namespace metrics_api_handler_test {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// ShardSets by namespace/name, and SubjectAccessReviews answered by `allow`. Unit tests only.
class FakeClient final : public k8s::KubeClient {
 public:
  std::map<std::string, json> shard_sets;  // "ns/name"
  std::function<bool(const json& spec)> allow = [](const json&) { return true; };
  std::optional<k8s::Error> read_error;
  int reviews = 0;

  k8s::Result<json> get(const k8s::Resource& r, const std::string& ns, const std::string& name,
                        const std::string& = {}) override {
    if (read_error) return std::unexpected(*read_error);
    auto it = shard_sets.find(ns + "/" + name);
    if (r.resource != "shardsets" || it == shard_sets.end()) {
      return k8s::makeError(k8s::ErrorKind::NotFound, "not found");
    }
    return it->second;
  }
  k8s::Result<json> list(const k8s::Resource& r, const std::string& ns,
                         const k8s::ListOptions& = {}) override {
    if (read_error) return std::unexpected(*read_error);
    json items = json::array();
    for (const auto& [key, object] : shard_sets) {
      if (r.resource == "shardsets" && key.starts_with(ns + "/")) items.push_back(object);
    }
    return json{{"metadata", {{"resourceVersion", "1"}}}, {"items", items}};
  }
  k8s::Result<json> create(const k8s::Resource& r, const std::string&, const json& obj) override {
    if (r.resource != "subjectaccessreviews") return k8s::makeError(k8s::ErrorKind::Other, "no");
    ++reviews;
    json answer = obj;
    answer["status"] = {{"allowed", allow(obj["spec"])}};
    if (!allow(obj["spec"])) answer["status"]["reason"] = "no RBAC rule";
    return answer;
  }
  k8s::Result<json> update(const k8s::Resource&, const std::string&, const json&,
                           const std::string& = {}) override {
    return k8s::makeError(k8s::ErrorKind::Other, "unused");
  }
  k8s::Result<json> patch(const k8s::Resource&, const std::string&, const std::string&,
                          k8s::PatchType, const json&, const std::string& = {}) override {
    return k8s::makeError(k8s::ErrorKind::Other, "unused");
  }
  k8s::Result<json> remove(const k8s::Resource&, const std::string&, const std::string&,
                           const k8s::DeleteOptions& = {}) override {
    return k8s::makeError(k8s::ErrorKind::Other, "unused");
  }
  k8s::Result<void> watch(const k8s::Resource&, const std::string&, const k8s::WatchOptions&,
                          const k8s::WatchHandler&, const std::atomic<bool>* = nullptr) override {
    return k8s::makeError(k8s::ErrorKind::Other, "unused");
  }
};

const std::string& caPem() {
  static const std::string pem =
      certificates::testing::makeTestPki("front-proxy-ca").ca.certificate().pem();
  return pem;
}

json configMap(const std::string& version, const std::string& ca = caPem()) {
  json data = {{"requestheader-allowed-names", "[\"front-proxy-client\"]"},
               {"requestheader-username-headers", "[\"X-Remote-User\"]"},
               {"requestheader-group-headers", "[\"X-Remote-Group\"]"}};
  if (!ca.empty()) data["requestheader-client-ca-file"] = ca;
  return {{"metadata", {{"resourceVersion", version}}}, {"data", data}};
}

json shardSet(const std::string& name, std::vector<double> rates, const std::string& updated) {
  json per_shard = json::array();
  for (size_t i = 0; i < rates.size(); ++i) {
    per_shard.push_back({{"index", i}, {"samplesPerSecond", rates[i]}});
  }
  return {{"metadata", {{"namespace", "monitoring"}, {"name", name}}},
          {"spec", {{"ingestion", {{"interval", "30s"}}}}},
          {"status",
           {{"targetShards", rates.size()},
            {"ingestion", {{"perShard", per_shard}, {"lastUpdate", updated}}}}}};
}

class MetricsApiHandlerTest : public ::testing::Test {
 protected:
  MetricsApiHandlerTest() {
    clock_.setSystemTime(
        std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000)));
    client_.shard_sets["monitoring/main"] =
        shardSet("main", {1500.5, 499.5}, "2027-01-15T08:00:00Z");
    client_.shard_sets["monitoring/old"] = shardSet("old", {10}, "2027-01-15T07:50:00Z");
    FrontProxyConfigWatch watch(client_, clock_, config_, trust_);
    watch.apply(configMap("1"));
  }

  serving::Request request(const std::string& path, const std::string& query = "") {
    serving::Request r;
    r.method = "GET";
    r.path = path;
    r.query = query;
    r.target = path + (query.empty() ? "" : "?" + query);
    r.peer.verified = true;
    r.peer.subject_common_name = "front-proxy-client";
    r.headers = {{"X-Remote-User", "system:serviceaccount:kube-system:horizontal-pod-autoscaler"},
                 {"X-Remote-Group", "system:serviceaccounts"}};
    return r;
  }

  serving::Response handle(const serving::Request& r) {
    MetricsApiHandler handler(
        client_, clock_, config_,
        {.observer = [this](const RequestOutcome& o) { outcomes_.push_back(o); }});
    return handler.handle(r);
  }

  static constexpr const char* kMetricPath =
      "/apis/external.metrics.k8s.io/v1beta1/namespaces/monitoring/shardscaler_samples_per_second";

  FakeClient client_;
  k8s::ManualClock clock_;
  RequestHeaderConfigSlot config_;
  certificates::TrustBundleSlot trust_;
  std::vector<RequestOutcome> outcomes_;
};

TEST_F(MetricsApiHandlerTest, ServesTheTotalOfAShardSet) {
  auto response = handle(request(kMetricPath, "labelSelector=shardset%3Dmain"));
  ASSERT_EQ(response.status, 200) << response.body;
  json list = json::parse(response.body);
  ASSERT_EQ(list["items"].size(), 1);
  EXPECT_EQ(list["items"][0]["value"], "2000");
  EXPECT_EQ(list["items"][0]["metricLabels"]["shardset"], "main");
  ASSERT_EQ(outcomes_.size(), 1);
  EXPECT_EQ(outcomes_[0].route, "metric");
  EXPECT_EQ(outcomes_[0].user, "system:serviceaccount:kube-system:horizontal-pod-autoscaler");
  EXPECT_EQ(outcomes_[0].values, 1);
}

// A selector that is not UTF-8 once decoded: the error repeats it, and must still be a 400
// Status, not a 500 from a JSON encoder that throws on invalid UTF-8.
TEST_F(MetricsApiHandlerTest, ASelectorThatIsNotUtf8IsABadRequest) {
  for (const char* query :
       {"labelSelector=%FF", "labelSelector=shardset%3D%FF%FE", "labelSelector=%C3%28%3Dx"}) {
    auto response = handle(request(kMetricPath, query));
    EXPECT_EQ(response.status, 400) << query << ": " << response.body;
    json status = json::parse(response.body, nullptr, false);
    ASSERT_FALSE(status.is_discarded()) << query;
    EXPECT_EQ(status["reason"], "BadRequest") << query;
  }
}

TEST_F(MetricsApiHandlerTest, AStaleShardSetIsAnErrorNeverAZero) {
  auto response = handle(request(kMetricPath, "labelSelector=shardset%3Dold"));
  EXPECT_EQ(response.status, 503);
  json status = json::parse(response.body);
  EXPECT_EQ(status["kind"], "Status");
  EXPECT_THAT(status["message"].get<std::string>(), HasSubstr("older than 90s"));
  EXPECT_EQ(outcomes_.back().reason, "StaleRates");
  // Without a selector, one stale ShardSet fails the list rather than shrinking it.
  EXPECT_EQ(handle(request(kMetricPath)).status, 503);
  // A failed read is an error too.
  client_.read_error = k8s::Error{.kind = k8s::ErrorKind::Transport, .message = "down"};
  EXPECT_EQ(handle(request(kMetricPath, "labelSelector=shardset%3Dmain")).status, 503);
  EXPECT_EQ(outcomes_.back().reason, "ReadFailed");
}

TEST_F(MetricsApiHandlerTest, AnUnknownShardSetIsNotFound) {
  auto response = handle(request(kMetricPath, "labelSelector=shardset%3Dnone"));
  EXPECT_EQ(response.status, 404);
  EXPECT_THAT(response.body, HasSubstr("no ShardSet in namespace monitoring matches"));
}

// Found by fuzz_metrics_api_request: a path or a user header that is not UTF-8 made the JSON of
// the answer throw (nlohmann type_error 316) instead of answering.
TEST_F(MetricsApiHandlerTest, BytesThatAreNotUtf8AreAnsweredNotThrown) {
  auto response = handle(request("/apis/\xff\x9f/v1"));
  EXPECT_EQ(response.status, 404);
  EXPECT_FALSE(json::parse(response.body, nullptr, false).is_discarded()) << response.body;

  // A namespace that is not a DNS label is not one: 404, and no SubjectAccessReview names it.
  response =
      handle(request("/apis/external.metrics.k8s.io/v1beta1/namespaces/moni\xfftoring/"
                     "shardscaler_samples_per_second",
                     "labelSelector=shardset%3Dmain"));
  EXPECT_EQ(response.status, 404);
  EXPECT_FALSE(json::parse(response.body, nullptr, false).is_discarded()) << response.body;

  // Found by the same target: a listed ShardSet without metadata made value() throw on null.
  client_.shard_sets["monitoring/nameless"] = json{{"spec", json::object()}};
  EXPECT_EQ(handle(request(kMetricPath, "labelSelector=shardset%3Dmain")).status, 200);

  auto user = request(kMetricPath, "labelSelector=shardset%3Dmain");
  user.headers = {{"X-Remote-User", "system:\xc0\xaf"}};
  EXPECT_EQ(handle(user).status, 401);
  auto cn = request(kMetricPath, "labelSelector=shardset%3Dmain");
  cn.peer.subject_common_name = "front-proxy-cl\xff";
  response = handle(cn);
  EXPECT_EQ(response.status, 401);
  EXPECT_FALSE(json::parse(response.body, nullptr, false).is_discarded()) << response.body;
}

TEST_F(MetricsApiHandlerTest, DirectAndAnonymousCallersAre401BeforeAnyRoute) {
  serving::Request direct = request(kMetricPath, "labelSelector=shardset%3Dmain");
  direct.peer = {};
  auto response = handle(direct);
  EXPECT_EQ(response.status, 401);
  EXPECT_EQ(json::parse(response.body)["reason"], "Unauthorized");
  serving::Request wrong_name = request("/no/such/path");
  wrong_name.peer.subject_common_name = "someone";
  EXPECT_EQ(handle(wrong_name).status, 401);
  serving::Request no_user = request("/apis");
  no_user.headers.clear();
  EXPECT_EQ(handle(no_user).status, 401);
  EXPECT_EQ(client_.reviews, 0);
}

TEST_F(MetricsApiHandlerTest, AuthorizationIsDelegatedAndCached) {
  std::vector<json> specs;
  client_.allow = [&](const json& spec) {
    specs.push_back(spec);
    return spec["user"] != "mallory";
  };
  serving::Request mallory = request(kMetricPath, "labelSelector=shardset%3Dmain");
  mallory.headers = {{"X-Remote-User", "mallory"}};
  auto denied = handle(mallory);
  EXPECT_EQ(denied.status, 403);
  EXPECT_THAT(
      json::parse(denied.body)["message"].get<std::string>(),
      HasSubstr("User \"mallory\" cannot list resource \"shardscaler_samples_per_second\""));
  ASSERT_FALSE(specs.empty());
  EXPECT_EQ(specs.back()["resourceAttributes"]["namespace"], "monitoring");
  EXPECT_EQ(specs.back()["groups"], json::array({"system:authenticated"}));

  // One handler, two requests of the same caller: one review.
  MetricsApiHandler handler(client_, clock_, config_, {});
  const int before = client_.reviews;
  EXPECT_EQ(handler.handle(request("/apis")).status, 200);
  EXPECT_EQ(handler.handle(request("/apis")).status, 200);
  EXPECT_EQ(client_.reviews, before + 1);
  clock_.advance(std::chrono::seconds(11));
  EXPECT_EQ(handler.handle(request("/apis")).status, 200);
  EXPECT_EQ(client_.reviews, before + 2);
}

TEST_F(MetricsApiHandlerTest, DiscoveryAndOpenApiAnswer) {
  EXPECT_EQ(json::parse(handle(request("/apis")).body)["kind"], "APIGroupList");
  EXPECT_EQ(json::parse(handle(request("/apis/external.metrics.k8s.io")).body)["kind"], "APIGroup");
  EXPECT_EQ(json::parse(handle(request("/apis/external.metrics.k8s.io/v1beta1")).body)["kind"],
            "APIResourceList");
  auto openapi = handle(request("/openapi/v2"));
  ASSERT_EQ(openapi.status, 200);
  ASSERT_EQ(openapi.headers.size(), 1);
  serving::Request again = request("/openapi/v2");
  again.headers.emplace_back("If-None-Match", openapi.headers[0].second);
  auto not_modified = handle(again);
  EXPECT_EQ(not_modified.status, 304);
  EXPECT_TRUE(not_modified.body.empty());
  EXPECT_EQ(handle(request("/apis/metrics.k8s.io")).status, 404);
}

TEST_F(MetricsApiHandlerTest, BeforeTheSettingsAreReadEverythingIs503) {
  RequestHeaderConfigSlot empty;
  MetricsApiHandler handler(client_, clock_, empty, {});
  EXPECT_EQ(handler.handle(request("/apis")).status, 503);
}

TEST_F(MetricsApiHandlerTest, TheWatchKeepsTheLastGoodSettings) {
  std::vector<std::string> reasons;
  RequestHeaderConfigSlot slot;
  certificates::TrustBundleSlot trust;
  FrontProxyConfigWatch watch(client_, clock_, slot, trust,
                              [&](std::string_view r) { reasons.emplace_back(r); });
  watch.apply(configMap("1"));
  ASSERT_NE(slot.current(), nullptr);
  ASSERT_NE(trust.current(), nullptr);
  const auto first = slot.current();
  watch.apply(configMap("1"));  // a resync
  EXPECT_EQ(slot.current(), first);
  watch.apply(configMap("2", "garbage"));
  EXPECT_EQ(slot.current(), first);
  EXPECT_EQ(reasons, std::vector<std::string>{"front_proxy_config_invalid"});
  // A new CA replaces the old one for the next connections.
  const std::string other = certificates::testing::makeTestPki("rotated-ca").ca.certificate().pem();
  watch.apply(configMap("3", other));
  EXPECT_EQ(trust.current()->pem().find("BEGIN CERTIFICATE") != std::string::npos, true);
  EXPECT_NE(trust.current()->certificates()[0].pem(), first->client_ca->certificates()[0].pem());
  watch.apply(configMap("4", ""));
  EXPECT_EQ(slot.current()->client_ca, nullptr);
  EXPECT_EQ(reasons.back(), "front_proxy_config_without_ca");
}

}  // namespace
}  // namespace metrics_api_handler_test
}  // namespace shardscaler::metrics_api
