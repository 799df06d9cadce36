// The shard guard's flags of `shardscaler run`: defaults from the pod's namespace, lists that
// replace their default, the config file keys, and one clear error per bad value.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/app/run_options.h"
#include "shardscaler/base/expected.h"

namespace shardscaler::app {
namespace options_webhook_test {
namespace {

using ::testing::HasSubstr;
using Strings = std::vector<std::string>;

Expected<Command> parse(std::initializer_list<std::string_view> args,
                        std::optional<std::string> pod_namespace = {}) {
  std::vector<std::string_view> v(args);
  OptionsEnvironment env;
  env.default_identity = "h_1";
  env.pod_namespace = std::move(pod_namespace);
  return parseCommandLine(std::span<const std::string_view>(v), env);
}

RunOptions run(std::initializer_list<std::string_view> args,
               std::optional<std::string> pod_namespace = {}) {
  auto c = parse(args, std::move(pod_namespace));
  EXPECT_TRUE(c) << c.error();
  return c ? std::get<RunOptions>(*c) : RunOptions{};
}

std::string error(std::initializer_list<std::string_view> args) {
  auto c = parse(args);
  EXPECT_FALSE(c);
  return c ? "" : c.error();
}

TEST(OptionsWebhookTest, DefaultsServeTheGuardForThePodsNamespace) {
  const RunOptions o = run({"run"}, "monitoring");
  ASSERT_TRUE(o.webhook_bind_address);
  EXPECT_EQ(o.webhook_bind_address->toString(), ":9443");
  EXPECT_EQ(o.webhook_cert_secret_namespace, "monitoring");
  EXPECT_EQ(o.webhook_cert_secret, "shardscaler-webhook-cert");
  EXPECT_EQ(o.webhook_cert_dir, "");
  EXPECT_EQ(o.webhook_configuration, "shardscaler-guard");
  EXPECT_EQ(o.webhook_hosts, (Strings{"shardscaler-webhook.monitoring.svc",
                                      "shardscaler-webhook.monitoring.svc.cluster.local"}));
  EXPECT_EQ(o.webhook_cert_validity, std::chrono::hours(8760));
  EXPECT_EQ(o.webhook_ca_validity, std::chrono::hours(87600));
  EXPECT_EQ(o.webhook_cert_refresh, std::chrono::seconds(30));
  EXPECT_TRUE(o.guard_exempt_users.empty());
  EXPECT_EQ(o.guard_exempt_groups, Strings{"system:masters"});
  EXPECT_EQ(o.guard_cleanup_users,
            (Strings{"system:serviceaccount:kube-system:generic-garbage-collector",
                     "system:serviceaccount:kube-system:namespace-controller",
                     "system:kube-controller-manager"}));
  EXPECT_EQ(o.guard_self_user, "");

  const RunOptions outside = run({"run"});
  EXPECT_EQ(outside.webhook_cert_secret_namespace, "default");
  EXPECT_EQ(outside.webhook_hosts.front(), "shardscaler-webhook.default.svc");
}

TEST(OptionsWebhookTest, EveryFlag) {
  const RunOptions o =
      run({"run", "--webhook-bind-address=127.0.0.1:0", "--webhook-cert-secret=ops/guard-tls",
           "--webhook-cert-dir=/certs", "--webhook-configuration=my-guard",
           "--webhook-hosts=127.0.0.1,::1", "--webhook-hosts", "guard.example.com",
           "--webhook-cert-validity=1h", "--webhook-ca-validity=2h", "--webhook-cert-refresh=5s",
           "--guard-exempt-users=alice,bob", "--guard-exempt-groups=sre",
           "--guard-cleanup-users=admin", "--guard-self-user=me"});
  EXPECT_EQ(o.webhook_bind_address, (BindAddress{"127.0.0.1", 0}));
  EXPECT_EQ(o.webhook_cert_secret_namespace, "ops");
  EXPECT_EQ(o.webhook_cert_secret, "guard-tls");
  EXPECT_EQ(o.webhook_cert_dir, "/certs");
  EXPECT_EQ(o.webhook_configuration, "my-guard");
  EXPECT_EQ(o.webhook_hosts, (Strings{"127.0.0.1", "::1", "guard.example.com"}));
  EXPECT_EQ(o.webhook_cert_validity, std::chrono::hours(1));
  EXPECT_EQ(o.webhook_ca_validity, std::chrono::hours(2));
  EXPECT_EQ(o.webhook_cert_refresh, std::chrono::seconds(5));
  EXPECT_EQ(o.guard_exempt_users, (Strings{"alice", "bob"}));
  EXPECT_EQ(o.guard_exempt_groups, Strings{"sre"});  // replaces system:masters
  EXPECT_EQ(o.guard_cleanup_users, Strings{"admin"});
  EXPECT_EQ(o.guard_self_user, "me");

  EXPECT_EQ(
      run({"run", "--webhook-cert-secret=guard-tls"}, "monitoring").webhook_cert_secret_namespace,
      "monitoring");
}

TEST(OptionsWebhookTest, ZeroDisablesTheGuardAndAnEmptyListExemptsNoGroup) {
  EXPECT_FALSE(run({"run", "--webhook-bind-address=0"}).webhook_bind_address);
  EXPECT_TRUE(run({"run", "--guard-exempt-groups="}).guard_exempt_groups.empty());
}

TEST(OptionsWebhookTest, BadValuesNameTheFlag) {
  EXPECT_EQ(error({"run", "--webhook-bind-address=9443"}),
            "--webhook-bind-address: \"9443\" is not host:port (missing port; e.g. :8080 or "
            "127.0.0.1:0)");
  EXPECT_EQ(error({"run", "--webhook-cert-secret=Bad/x"}),
            "--webhook-cert-secret: \"Bad\" is not a valid namespace name (lowercase letters, "
            "digits and '-', at most 63)");
  EXPECT_THAT(error({"run", "--webhook-configuration=Not_A_Name"}),
              HasSubstr("\"Not_A_Name\" is not a valid object name"));
  EXPECT_EQ(error({"run", "--webhook-hosts=a,,b"}), "--webhook-hosts: empty entry in \"a,,b\"");
  EXPECT_EQ(error({"run", "--webhook-hosts=under_score"}),
            "--webhook-hosts: \"under_score\" is neither a DNS name nor an IP address");
  EXPECT_EQ(error({"run", "--webhook-cert-validity=0"}),
            "--webhook-cert-validity: must be greater than 0, got \"0\"");
  EXPECT_EQ(error({"run", "--webhook-cert-validity=3h", "--webhook-ca-validity=2h"}),
            "--webhook-cert-validity (3h0m0s) must not exceed --webhook-ca-validity (2h0m0s)");
}

TEST(OptionsWebhookTest, ConfigFileListsReplaceTheDefaultAndFlagsWin) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("shardscaler-webhook-options-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << "webhookBindAddress: 127.0.0.1:9999\n"
                         "webhookHosts: [guard.internal]\n"
                         "guardExemptGroups: [platform]\n"
                         "guardExemptUsers: []\n"
                         "guardCleanupUsers: [gc]\n"
                         "guardSelfUser: system:serviceaccount:ops:shardscaler\n"
                         "webhookCertRefresh: 1m\n";
  const std::string config = "--config=" + path.string();
  const RunOptions file = run({"run", config});
  EXPECT_EQ(file.webhook_bind_address, (BindAddress{"127.0.0.1", 9999}));
  EXPECT_EQ(file.webhook_hosts, Strings{"guard.internal"});
  EXPECT_EQ(file.guard_exempt_groups, Strings{"platform"});
  EXPECT_TRUE(file.guard_exempt_users.empty());
  EXPECT_EQ(file.guard_cleanup_users, Strings{"gc"});
  EXPECT_EQ(file.guard_self_user, "system:serviceaccount:ops:shardscaler");
  EXPECT_EQ(file.webhook_cert_refresh, std::chrono::minutes(1));
  const RunOptions flags = run({"run", config, "--guard-exempt-groups=sre"});
  EXPECT_EQ(flags.guard_exempt_groups, Strings{"sre"});
  std::filesystem::remove(path);
}

TEST(OptionsWebhookTest, HelpListsTheGuardFlags) {
  const std::string help = runHelp();
  for (const char* line :
       {"--webhook-bind-address ADDRESS", "(default: :9443)", "--webhook-cert-secret [NS/]NAME",
        "--webhook-cert-dir DIR", "--webhook-configuration NAME", "(default: shardscaler-guard)",
        "--webhook-hosts HOST", "--webhook-cert-validity DURATION", "(default: 8760h)",
        "--webhook-ca-validity DURATION", "--webhook-cert-refresh DURATION",
        "--guard-exempt-users USER", "--guard-exempt-groups GROUP", "(default: system:masters)",
        "--guard-cleanup-users USER", "--guard-self-user USER", "/guard/statefulsets"}) {
    EXPECT_THAT(help, HasSubstr(line));
  }
}

}  // namespace
}  // namespace options_webhook_test
}  // namespace shardscaler::app
