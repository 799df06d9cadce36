// The `shardscaler run` flags of the shard guard and its HTTPS server (rows of the option table in
// run_options.cc; see option_spec.h).
#include "option_spec.h"

namespace shardscaler::app::detail {

const std::vector<RunSpec>& webhookRunSpecs() {
  using O = RunOptions;
  static const std::vector<RunSpec> specs = {
      {"webhook-bind-address", "webhookBindAddress", "ADDRESS", ":9443",
       "host:port serving the shard guard webhook over HTTPS; \"0\" disables the guard",
       listener(&O::webhook_bind_address)},
      {"webhook-cert-secret", "webhookCertSecret", "[NS/]NAME",
       "shardscaler-webhook-cert in the pod's namespace",
       "Secret where shardscaler keeps the webhook's CA and serving certificate",
       objectReference(&O::webhook_cert_secret_namespace, &O::webhook_cert_secret)},
      {"webhook-cert-dir", "webhookCertDir", "DIR", "none",
       "load tls.crt, tls.key and ca.crt from here (e.g. a cert-manager Secret) and manage "
       "neither the Secret nor the caBundle",
       text(&O::webhook_cert_dir)},
      {"webhook-configuration", "webhookConfiguration", "NAME", "shardscaler-guard",
       "ValidatingWebhookConfiguration whose caBundle shardscaler keeps current",
       text(&O::webhook_configuration, checkObjectName)},
      {"webhook-hosts", "webhookHosts", "HOST",
       "shardscaler-webhook.<ns>.svc and .svc.cluster.local",
       "DNS names and IP addresses the serving certificate is for; repeat or separate with commas",
       list(&O::webhook_hosts, checkHostName)},
      {"webhook-cert-validity", "webhookCertValidity", "DURATION", "8760h",
       "lifetime of a serving certificate shardscaler issues; it is renewed at 2/3 of it",
       duration(&O::webhook_cert_validity)},
      {"webhook-ca-validity", "webhookCaValidity", "DURATION", "87600h",
       "lifetime of the CA shardscaler creates", duration(&O::webhook_ca_validity)},
      {"webhook-cert-refresh", "webhookCertRefresh", "DURATION", "30s",
       "how often every replica re-reads the certificate Secret (and re-checks the caBundle)",
       duration(&O::webhook_cert_refresh)},
      {"guard-exempt-users", "guardExemptUsers", "USER", "none",
       "users the guard lets delete or re-attach any shard; repeat or separate with commas",
       list(&O::guard_exempt_users, nullptr)},
      {"guard-exempt-groups", "guardExemptGroups", "GROUP", "system:masters",
       "groups whose members the guard lets through; --guard-exempt-groups= exempts no group",
       list(&O::guard_exempt_groups, nullptr)},
      {"guard-cleanup-users", "guardCleanupUsers", "USER",
       "the garbage collector, the namespace controller, system:kube-controller-manager",
       "users that may delete guarded shards once their target or namespace is being deleted",
       list(&O::guard_cleanup_users, nullptr)},
      {"guard-self-user", "guardSelfUser", "USER",
       "found from the client certificate or a TokenReview",
       "the user shardscaler's own requests arrive as (its re-attaches are exempt)",
       text(&O::guard_self_user)},
  };
  return specs;
}

}  // namespace shardscaler::app::detail
