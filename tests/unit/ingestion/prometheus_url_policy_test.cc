// Which spec.ingestion.prometheusURL shardscaler may query: the default (the cluster's Services on
// port 9090), patterns that cannot be fooled by a longer host, port or path, the regex, and the
// refusals of URLs with credentials, a query or a fragment, each with its reason and the flag.
#include "shardscaler/ingestion/prometheus_url_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace shardscaler::ingestion {
namespace {

using ::testing::HasSubstr;
using Strings = std::vector<std::string>;

PrometheusUrlPolicy policy(const Strings& allow, const std::string& regex = "") {
  auto made = PrometheusUrlPolicy::make(allow, regex);
  EXPECT_TRUE(made.has_value()) << made.error();
  return made ? *made : PrometheusUrlPolicy::defaults();
}

std::string reasonOf(const PrometheusUrlPolicy& p, const std::string& url) {
  auto refused = p.refusal(url);
  return refused ? refused->reason : "allowed";
}

TEST(PrometheusUrlPolicy, TheDefaultAllowsTheClustersServicesOnPrometheusPort) {
  const PrometheusUrlPolicy p = PrometheusUrlPolicy::defaults();
  for (const char* url : {"http://prometheus-operated.monitoring.svc:9090",
                          "http://prometheus-operated.monitoring.svc:9090/",
                          "https://thanos-query.observability.svc:9090/prefix",
                          "http://prometheus-operated.monitoring.svc.cluster.local:9090",
                          "HTTP://Prometheus-Operated.Monitoring.SVC:9090"}) {
    EXPECT_EQ(reasonOf(p, url), "allowed") << url;
  }
}

TEST(PrometheusUrlPolicy, TheDefaultRefusesWhatAShardSetMustNotMakeShardscalerReach) {
  const PrometheusUrlPolicy p = PrometheusUrlPolicy::defaults();
  for (const char* url : {
           "http://169.254.169.254/latest/meta-data",    // the cloud's metadata service
           "http://10.0.0.1:9090",                       // an address
           "https://kubernetes.default.svc:443",         // the API server
           "http://prometheus-operated.monitoring.svc",  // port 80
           "http://node-exporter.monitoring.svc:9100",   // another port
           "http://prometheus.example.com:9090",         // outside the cluster
           "http://svc:9090",                            // no label before .svc
           "http://prometheus.monitoring.svc.example.com:9090",
           "http://[::1]:9090",
       }) {
    EXPECT_EQ(reasonOf(p, url), kReasonPrometheusURLNotAllowed) << url;
  }
}

TEST(PrometheusUrlPolicy, APatternIsNotFooledByALongerHostPortOrPath) {
  const PrometheusUrlPolicy p = policy({"http://prometheus.monitoring.svc:9090/prom"});
  EXPECT_EQ(reasonOf(p, "http://prometheus.monitoring.svc:9090/prom"), "allowed");
  EXPECT_EQ(reasonOf(p, "http://prometheus.monitoring.svc:9090/prom/sub"), "allowed");
  for (const char* url : {
           "http://prometheus.monitoring.svc:9090/prometheus",
           "http://prometheus.monitoring.svc:9090/",
           "http://prometheus.monitoring.svc:909/prom",
           "http://prometheus.monitoring.svc.evil.example:9090/prom",
           "http://evilprometheus.monitoring.svc:9090/prom",
           "https://prometheus.monitoring.svc:9090/prom",
       }) {
    EXPECT_EQ(reasonOf(p, url), kReasonPrometheusURLNotAllowed) << url;
  }
  // Whatever a string prefix would have let through is not a URL shardscaler reads.
  for (const char* url : {
           "http://prometheus.monitoring.svc:9090@evil.example/prom",
           "http://prometheus.monitoring.svc:90901/prom",  // no such port
           "http://prometheus.monitoring.svc:9090/prom/../../admin",
           "http://prometheus.monitoring.svc:9090/prom/%2e%2e/admin",
           "http://prometheus.monitoring.svc:9090/prom\\@evil.example",
       }) {
    EXPECT_EQ(reasonOf(p, url), kReasonInvalidPrometheusURL) << url;
  }
}

TEST(PrometheusUrlPolicy, WildcardHostsAndPortsAndTheSchemesDefaultPort) {
  const PrometheusUrlPolicy any = policy({"http://*:*"});
  EXPECT_EQ(reasonOf(any, "http://10.0.0.1:1234/x"), "allowed");
  EXPECT_EQ(reasonOf(any, "http://[fd00::1]:9090"), "allowed");
  EXPECT_EQ(reasonOf(any, "https://10.0.0.1:1234"), kReasonPrometheusURLNotAllowed);

  const PrometheusUrlPolicy thanos = policy({"https://thanos.example", "http://127.0.0.1:*"});
  EXPECT_EQ(reasonOf(thanos, "https://thanos.example:443/api"), "allowed");
  EXPECT_EQ(reasonOf(thanos, "https://thanos.example:8443"), kReasonPrometheusURLNotAllowed);
  EXPECT_EQ(reasonOf(thanos, "http://127.0.0.1:40123"), "allowed");
  EXPECT_EQ(reasonOf(thanos, "http://127.0.0.2:40123"), kReasonPrometheusURLNotAllowed);
}

TEST(PrometheusUrlPolicy, CredentialsAQueryOrAFragmentAreRefusedWhateverTheAllowList) {
  const PrometheusUrlPolicy any = policy({"http://*:*", "https://*:*"}, ".*");
  struct Case {
    std::string url;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {"http://prometheus.monitoring.svc:9090/?x=1", "must not have a query"},
           {"http://prometheus.monitoring.svc:9090/api/v1/query?query=up#",
            "must not have a query"},
           {"http://prometheus.monitoring.svc:9090/#frag", "must not have a fragment"},
           {"http://user:password@prometheus.monitoring.svc:9090", "credentials"},
           {"http://prometheus.monitoring.svc:9090/pro@m", "an \"@\" in its path"},
           {"ftp://prometheus.monitoring.svc:9090", "http:// or https://"},
           {"prometheus.monitoring.svc:9090", "http:// or https://"},
           {"http://", "no host"},
           {"http://:9090", "no host"},
           {"http://prometheus.monitoring.svc:0", "port"},
           {"http://prometheus.monitoring.svc:99999", "port"},
           {"http://prometheus.monitoring.svc:", "port"},
           {"http://prom etheus.svc:9090", "printable ASCII"},
           {"http://prometheus.svc:9090/\x01", "printable ASCII"},
           {"http://prometheus.svc:9090/" + std::string(2100, 'a'), "longer than 2048"},
       }) {
    auto refused = any.refusal(c.url);
    ASSERT_TRUE(refused.has_value()) << c.url;
    EXPECT_EQ(refused->reason, kReasonInvalidPrometheusURL) << c.url;
    EXPECT_THAT(refused->message, HasSubstr(c.says)) << c.url;
    EXPECT_THAT(refused->message, HasSubstr("spec.ingestion.prometheusURL")) << c.url;
  }
}

TEST(PrometheusUrlPolicy, TheRegexMatchesTheWholeUrl) {
  const PrometheusUrlPolicy p = policy({}, R"(https://[a-z-]+\.thanos\.example(/.*)?)");
  EXPECT_EQ(reasonOf(p, "https://eu.thanos.example"), "allowed");
  EXPECT_EQ(reasonOf(p, "https://eu.thanos.example/prom"), "allowed");
  EXPECT_EQ(reasonOf(p, "https://eu.thanos.example.evil.example"), kReasonPrometheusURLNotAllowed);
  EXPECT_EQ(reasonOf(p, "http://eu.thanos.example"), kReasonPrometheusURLNotAllowed);
  // The longest URL the regex ever sees does not exhaust the stack.
  const PrometheusUrlPolicy everything = policy({}, "(.|\\n)*");
  EXPECT_EQ(reasonOf(everything, "http://a.example/" + std::string(2048 - 17, 'a')), "allowed");
}

TEST(PrometheusUrlPolicy, ARefusalNamesTheFlagsAndWhatTheyAllow) {
  auto refused = PrometheusUrlPolicy::defaults().refusal("http://evil.example:9090");
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->reason, kReasonPrometheusURLNotAllowed);
  EXPECT_THAT(refused->message, HasSubstr("\"http://evil.example:9090\""));
  EXPECT_THAT(refused->message, HasSubstr("--prometheus-url-allow pattern (http://*.svc:9090, "));
  EXPECT_THAT(refused->message, HasSubstr("cluster admin"));

  refused = policy({"http://a.svc:9090"}, "x").refusal("http://b.svc:9090");
  ASSERT_TRUE(refused.has_value());
  EXPECT_THAT(refused->message, HasSubstr("nor --prometheus-url-allow-regex \"x\""));

  refused = policy({}).refusal("http://b.svc:9090");
  ASSERT_TRUE(refused.has_value());
  EXPECT_THAT(refused->message, HasSubstr("allow none"));
}

TEST(PrometheusUrlPolicy, BadPatternsAndRegexesAreErrorsNamingThem) {
  for (const char* pattern : {"prometheus:9090", "http://*.svc:9090?x", "http://a*b.svc",
                              "http://*.svc:port", "http://u@*.svc", "http://*.:9090"}) {
    auto made = PrometheusUrlPolicy::make({pattern}, "");
    ASSERT_FALSE(made.has_value()) << pattern;
    EXPECT_THAT(made.error(), HasSubstr(pattern));
  }
  auto bad_regex = PrometheusUrlPolicy::make({}, "(unclosed");
  ASSERT_FALSE(bad_regex.has_value());
  EXPECT_THAT(bad_regex.error(), HasSubstr("(unclosed"));
}

TEST(PrometheusUrlPolicy, ParsedUrlsAreNormalized) {
  auto url = parsePrometheusUrl("HTTPS://Thanos.Example/prom//");
  ASSERT_TRUE(url.has_value()) << url.error();
  EXPECT_EQ(url->scheme, "https");
  EXPECT_EQ(url->host, "thanos.example");
  EXPECT_EQ(url->port, 443);
  EXPECT_EQ(url->path, "/prom");
  auto v6 = parsePrometheusUrl("http://[FD00::1]:9090");
  ASSERT_TRUE(v6.has_value()) << v6.error();
  EXPECT_EQ(v6->host, "fd00::1");
  EXPECT_EQ(v6->port, 9090);
}

}  // namespace
}  // namespace shardscaler::ingestion
