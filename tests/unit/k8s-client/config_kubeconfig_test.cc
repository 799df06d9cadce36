#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config_test_support.h"
#include "shardscaler/k8s_client/kube_config.h"

namespace shardscaler::k8s {
namespace {

using ::testing::HasSubstr;
using testing::kFakeCaPem;

constexpr const char* kCaBase64 =
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJmYWtlCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K";

TEST(ConfigKubeconfig, ReadsEveryFieldOfTheCurrentContext) {
  test_kit::TempDir dir("k8srest-");
  dir.write("pki/ca.crt", kFakeCaPem);
  dir.write("pki/client.crt", "CERT");
  dir.write("pki/client.key", "KEY");
  auto file = dir.write("config", R"(
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://10.1.2.3:6443/
    certificate-authority: pki/ca.crt
- name: other
  cluster: {server: https://other:443}
users:
- name: dev-user
  user:
    client-certificate: pki/client.crt
    client-key: pki/client.key
contexts:
- name: dev
  context: {cluster: dev-cluster, user: dev-user, namespace: team-a}
- name: other
  context: {cluster: other}
)");
  auto config = loadKubeconfigFiles({file});
  ASSERT_TRUE(config.has_value()) << config.error().describe();
  EXPECT_EQ(config->server, "https://10.1.2.3:6443");
  EXPECT_EQ(config->ca_file, (dir.path() / "pki/ca.crt").string());  // relative to the file
  EXPECT_TRUE(config->ca_data.empty());
  EXPECT_FALSE(config->insecure_skip_tls_verify);
  EXPECT_EQ(config->client_cert_file, (dir.path() / "pki/client.crt").string());
  EXPECT_EQ(config->client_key_file, (dir.path() / "pki/client.key").string());
  EXPECT_EQ(config->default_namespace, "team-a");
  EXPECT_THAT(config->origin, HasSubstr("context \"dev\""));
  EXPECT_EQ(config->request_timeout, std::chrono::seconds(30));
  EXPECT_EQ(config->connect_timeout, std::chrono::seconds(10));
}

TEST(ConfigKubeconfig, DataFieldsAreDecodedAndWinOverFiles) {
  auto config = parseKubeconfig(std::string(R"(
current-context: c
clusters:
- name: k
  cluster:
    server: https://k:6443
    certificate-authority: /does/not/matter
    certificate-authority-data: )") +
                                    kCaBase64 + R"(
users:
- name: u
  user:
    client-certificate-data: Q0VSVERBVEE=
    client-key-data: S0VZREFUQQ==
contexts:
- name: c
  context: {cluster: k, user: u}
)",
                                "test", "/");
  ASSERT_TRUE(config.has_value()) << config.error().describe();
  EXPECT_EQ(config->ca_data, kFakeCaPem);
  EXPECT_TRUE(config->ca_file.empty());
  EXPECT_EQ(config->client_cert_data, "CERTDATA");
  EXPECT_EQ(config->client_key_data, "KEYDATA");
  EXPECT_EQ(config->default_namespace, "default");
}

TEST(ConfigKubeconfig, TokenInsecureAndTokenFile) {
  test_kit::TempDir dir("k8srest-");
  dir.write("token", "from-file\n");
  std::string yaml = R"(
current-context: a
clusters:
- {name: k, cluster: {server: "https://k", insecure-skip-tls-verify: true}}
users:
- {name: static, user: {token: abc, tokenFile: token}}
- {name: file, user: {tokenFile: token}}
- {name: basic, user: {username: admin, password: secret}}
contexts:
- {name: a, context: {cluster: k, user: static}}
- {name: b, context: {cluster: k, user: file}}
- {name: c, context: {cluster: k, user: basic}}
)";
  auto a = parseKubeconfig(yaml, "t", dir.path());
  ASSERT_TRUE(a.has_value()) << a.error().describe();
  EXPECT_TRUE(a->insecure_skip_tls_verify);
  EXPECT_EQ(a->token, "abc");
  EXPECT_TRUE(a->token_file.empty());  // kubectl: token wins over tokenFile

  auto b = parseKubeconfig(yaml, "t", dir.path(), "b");
  ASSERT_TRUE(b.has_value()) << b.error().describe();
  EXPECT_TRUE(b->token.empty());
  EXPECT_EQ(b->token_file, (dir.path() / "token").string());

  auto c = parseKubeconfig(yaml, "t", dir.path(), "c");
  ASSERT_TRUE(c.has_value()) << c.error().describe();
  EXPECT_EQ(c->username, "admin");
  EXPECT_EQ(c->password, "secret");
}

TEST(ConfigKubeconfig, MissingContextNamesItAndTheKnownOnes) {
  test_kit::TempDir dir("k8srest-");
  auto file = dir.write("config", R"(
current-context: prod
clusters: [{name: k, cluster: {server: https://k}}]
contexts: [{name: dev, context: {cluster: k}}, {name: test, context: {cluster: k}}]
)");
  auto config = loadKubeconfigFiles({file});
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error().kind, ErrorKind::Config);
  EXPECT_EQ(config.error().message, "kubeconfig \"" + file.string() +
                                        "\": context \"prod\" (its current-context) is not "
                                        "defined; defined: \"dev\", \"test\"");

  auto explicit_context = loadKubeconfigFiles({file}, "staging");
  ASSERT_FALSE(explicit_context.has_value());
  EXPECT_THAT(explicit_context.error().message, HasSubstr("context \"staging\" is not defined"));
}

TEST(ConfigKubeconfig, NoCurrentContext) {
  auto config = parseKubeconfig("clusters: []\n", "\"x\"", "/");
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error().message,
            "kubeconfig \"x\" sets no current-context and no context was given");
}

TEST(ConfigKubeconfig, UnreadableCaFileNamesTheFileAndTheReason) {
  test_kit::TempDir dir("k8srest-");
  auto file = dir.write("config", R"(
current-context: c
clusters: [{name: k, cluster: {server: https://k, certificate-authority: missing-ca.crt}}]
contexts: [{name: c, context: {cluster: k}}]
)");
  auto config = loadKubeconfigFiles({file});
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error().kind, ErrorKind::Config);
  EXPECT_EQ(config.error().message,
            "kubeconfig \"" + file.string() + "\" cluster \"k\": cannot read " +
                "certificate-authority file \"" + (dir.path() / "missing-ca.crt").string() +
                "\": No such file or directory");
}

TEST(ConfigKubeconfig, CaPathThatIsADirectoryIsUnreadable) {
  // Root reads any file whatever its mode, so a directory stands in for "unreadable".
  test_kit::TempDir dir("k8srest-");
  std::filesystem::create_directories(dir.path() / "ca-dir");
  auto config = parseKubeconfig(R"(
current-context: c
clusters: [{name: k, cluster: {server: https://k, certificate-authority: ca-dir}}]
contexts: [{name: c, context: {cluster: k}}]
)",
                                "\"t\"", dir.path());
  ASSERT_FALSE(config.has_value());
  EXPECT_THAT(config.error().message,
              HasSubstr("cannot read certificate-authority file \"" +
                        (dir.path() / "ca-dir").string() + "\": Is a directory"));
}

TEST(ConfigKubeconfig, CaFileWithoutCertificate) {
  test_kit::TempDir dir("k8srest-");
  dir.write("ca.crt", "not a certificate");
  auto config = parseKubeconfig(R"(
current-context: c
clusters: [{name: k, cluster: {server: https://k, certificate-authority: ca.crt}}]
contexts: [{name: c, context: {cluster: k}}]
)",
                                "\"t\"", dir.path());
  ASSERT_FALSE(config.has_value());
  EXPECT_THAT(config.error().message, HasSubstr("holds no PEM certificate"));
}

TEST(ConfigKubeconfig, MalformedYamlGivesLineAndColumn) {
  test_kit::TempDir dir("k8srest-");
  auto file = dir.write("config", "clusters:\n- name: a\n  cluster: {server: [unclosed\n");
  auto config = loadKubeconfigFiles({file});
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error().kind, ErrorKind::Config);
  EXPECT_THAT(config.error().message,
              HasSubstr("kubeconfig \"" + file.string() + "\" is malformed YAML: "));
  EXPECT_THAT(config.error().message, HasSubstr("(line "));
}

TEST(ConfigKubeconfig, WrongShapesAreNamed) {
  auto scalar = parseKubeconfig("just text", "\"t\"", "/");
  ASSERT_FALSE(scalar.has_value());
  EXPECT_THAT(scalar.error().message, HasSubstr("is not a kubeconfig"));

  auto clusters_map = parseKubeconfig("clusters: {a: b}\n", "\"t\"", "/");
  ASSERT_FALSE(clusters_map.has_value());
  EXPECT_THAT(clusters_map.error().message, HasSubstr("\"clusters\" must be a list"));

  auto server_list = parseKubeconfig(R"(
current-context: c
clusters: [{name: k, cluster: {server: [a]}}]
contexts: [{name: c, context: {cluster: k}}]
)",
                                     "\"t\"", "/");
  ASSERT_FALSE(server_list.has_value());
  EXPECT_THAT(server_list.error().message,
              HasSubstr("cluster \"k\": field \"server\" must be a string"));

  auto bad_base64 = parseKubeconfig(R"(
current-context: c
clusters: [{name: k, cluster: {server: https://k, certificate-authority-data: "!!!"}}]
contexts: [{name: c, context: {cluster: k}}]
)",
                                    "\"t\"", "/");
  ASSERT_FALSE(bad_base64.has_value());
  EXPECT_THAT(bad_base64.error().message,
              HasSubstr("certificate-authority-data is not valid base64"));
}

TEST(ConfigKubeconfig, DanglingReferencesAndMissingPieces) {
  std::string base = R"(
current-context: c
clusters: [{name: k, cluster: {server: https://k}}, {name: empty, cluster: {}}]
users: [{name: half, user: {client-certificate-data: Q0VSVERBVEE=}},
        {name: plugin, user: {exec: {command: aws}}}]
contexts:
- {name: c, context: {cluster: nowhere}}
- {name: u, context: {cluster: k, user: nobody}}
- {name: e, context: {cluster: empty}}
- {name: h, context: {cluster: k, user: half}}
- {name: p, context: {cluster: k, user: plugin}}
)";
  auto cluster = parseKubeconfig(base, "\"t\"", "/");
  ASSERT_FALSE(cluster.has_value());
  EXPECT_THAT(cluster.error().message,
              HasSubstr("context \"c\" refers to cluster \"nowhere\", which is not defined"));
  auto user = parseKubeconfig(base, "\"t\"", "/", "u");
  ASSERT_FALSE(user.has_value());
  EXPECT_THAT(user.error().message, HasSubstr("refers to user \"nobody\", which is not defined"));
  auto server = parseKubeconfig(base, "\"t\"", "/", "e");
  ASSERT_FALSE(server.has_value());
  EXPECT_THAT(server.error().message, HasSubstr("cluster \"empty\" has no server"));
  auto half = parseKubeconfig(base, "\"t\"", "/", "h");
  ASSERT_FALSE(half.has_value());
  EXPECT_THAT(half.error().message, HasSubstr("has a client certificate but no client key"));
  auto plugin = parseKubeconfig(base, "\"t\"", "/", "p");
  ASSERT_FALSE(plugin.has_value());
  EXPECT_THAT(plugin.error().message, HasSubstr("exec plugin, which shardscaler does not run"));
}

TEST(ConfigKubeconfig, UnreadableTokenFile) {
  test_kit::TempDir dir("k8srest-");
  auto config = parseKubeconfig(R"(
current-context: c
clusters: [{name: k, cluster: {server: https://k}}]
users: [{name: u, user: {tokenFile: /nonexistent/token}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)",
                                "\"t\"", dir.path());
  ASSERT_FALSE(config.has_value());
  EXPECT_THAT(config.error().message,
              HasSubstr("user \"u\": cannot read tokenFile \"/nonexistent/token\": No such file"));
}

TEST(ConfigKubeconfig, MissingKubeconfigFile) {
  auto config = loadKubeconfigFiles({"/nonexistent/kubeconfig"});
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error().message,
            "cannot read kubeconfig \"/nonexistent/kubeconfig\": No such file or directory");
}

TEST(ConfigKubeconfig, KubeconfigListMergesFirstDefinitionWins) {
  test_kit::TempDir dir("k8srest-");
  auto first = dir.write("a", R"(
current-context: shared
clusters: [{name: k, cluster: {server: https://first}}]
contexts: [{name: shared, context: {cluster: k, namespace: from-a}}]
)");
  auto second = dir.write("b", R"(
current-context: other
clusters: [{name: k, cluster: {server: https://second}}, {name: k2, cluster: {server: https://k2}}]
contexts: [{name: shared, context: {cluster: k2}}, {name: other, context: {cluster: k2}}]
)");
  ConfigSources sources;
  sources.kubeconfig_env =
      (dir.path() / "missing").string() + ":" + first.string() + "::" + second.string();
  auto config = loadKubeConfig(sources);
  ASSERT_TRUE(config.has_value()) << config.error().describe();
  EXPECT_EQ(config->server, "https://first");
  EXPECT_EQ(config->default_namespace, "from-a");

  sources.context = "other";
  auto other = loadKubeConfig(sources);
  ASSERT_TRUE(other.has_value()) << other.error().describe();
  EXPECT_EQ(other->server, "https://k2");
}

TEST(ConfigLoadOrder, FlagBeatsEnvironmentBeatsInCluster) {
  test_kit::TempDir dir("k8srest-");
  auto flag_file = dir.write("flag", R"(
current-context: c
clusters: [{name: k, cluster: {server: https://flag}}]
contexts: [{name: c, context: {cluster: k}}]
)");
  auto env_file = dir.write("env", R"(
current-context: c
clusters: [{name: k, cluster: {server: https://env}}]
contexts: [{name: c, context: {cluster: k}}]
)");
  dir.write("sa/token", "sa-token\n");
  dir.write("sa/ca.crt", kFakeCaPem);
  dir.write("sa/namespace", "monitoring\n");
  ConfigSources sources;
  sources.kubeconfig_flag = flag_file.string();
  sources.kubeconfig_env = env_file.string();
  sources.service_host = "10.0.0.1";
  sources.service_port = "443";
  sources.in_cluster = {dir.path() / "sa/token", dir.path() / "sa/ca.crt",
                        dir.path() / "sa/namespace"};

  auto from_flag = loadKubeConfig(sources);
  ASSERT_TRUE(from_flag.has_value()) << from_flag.error().describe();
  EXPECT_EQ(from_flag->server, "https://flag");

  sources.kubeconfig_flag.clear();
  auto from_env = loadKubeConfig(sources);
  ASSERT_TRUE(from_env.has_value()) << from_env.error().describe();
  EXPECT_EQ(from_env->server, "https://env");

  sources.kubeconfig_env.clear();
  auto in_cluster = loadKubeConfig(sources);
  ASSERT_TRUE(in_cluster.has_value()) << in_cluster.error().describe();
  EXPECT_EQ(in_cluster->server, "https://10.0.0.1:443");
  EXPECT_EQ(in_cluster->token_file, (dir.path() / "sa/token").string());
  EXPECT_EQ(in_cluster->token_refresh_interval, std::chrono::seconds(60));
  EXPECT_EQ(in_cluster->ca_file, (dir.path() / "sa/ca.crt").string());
  EXPECT_FALSE(in_cluster->insecure_skip_tls_verify);
  EXPECT_EQ(in_cluster->default_namespace, "monitoring");
  EXPECT_EQ(in_cluster->origin, "in-cluster");
}

TEST(ConfigLoadOrder, MissingFlagFileIsAnErrorNotAFallback) {
  ConfigSources sources;
  sources.kubeconfig_flag = "/nonexistent/flag-config";
  sources.service_host = "10.0.0.1";
  sources.service_port = "443";
  auto config = loadKubeConfig(sources);
  ASSERT_FALSE(config.has_value());
  EXPECT_THAT(config.error().message, HasSubstr("/nonexistent/flag-config"));
}

TEST(ConfigLoadOrder, NothingConfiguredSaysWhatWasTried) {
  auto config = loadKubeConfig(ConfigSources{});
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error().kind, ErrorKind::Config);
  EXPECT_THAT(config.error().message,
              HasSubstr("no --kubeconfig was given, $KUBECONFIG is not set"));
  EXPECT_THAT(config.error().message, HasSubstr("KUBERNETES_SERVICE_HOST"));
}

TEST(ConfigInCluster, Ipv6HostAndMissingFiles) {
  test_kit::TempDir dir("k8srest-");
  dir.write("token", "t");
  dir.write("ca.crt", kFakeCaPem);
  auto v6 = loadInClusterConfig("fd00::1", "6443",
                                {dir.path() / "token", dir.path() / "ca.crt", dir.path() / "ns"});
  ASSERT_TRUE(v6.has_value()) << v6.error().describe();
  EXPECT_EQ(v6->server, "https://[fd00::1]:6443");
  EXPECT_EQ(v6->default_namespace, "default");  // no namespace file

  auto no_token = loadInClusterConfig(
      "10.0.0.1", "443", {dir.path() / "absent", dir.path() / "ca.crt", dir.path() / "ns"});
  ASSERT_FALSE(no_token.has_value());
  EXPECT_EQ(no_token.error().message, "in-cluster: cannot read service-account token file \"" +
                                          (dir.path() / "absent").string() +
                                          "\": No such file or directory");

  auto no_ca = loadInClusterConfig(
      "10.0.0.1", "443", {dir.path() / "token", dir.path() / "absent-ca", dir.path() / "ns"});
  ASSERT_FALSE(no_ca.has_value());
  EXPECT_THAT(no_ca.error().message, HasSubstr("cannot read service-account CA file"));
}

}  // namespace
}  // namespace shardscaler::k8s
