// The `shardscaler run` flags of the shard guard and its HTTPS server (rows of the option table in
// run_options.cc; see option_spec.h).
#include <arpa/inet.h>

#include <algorithm>

#include "option_spec.h"
#include "shardscaler/k8s_client/validation.h"

namespace shardscaler::service::detail {
namespace {

bool isIpAddress(const std::string& s) {
  unsigned char buffer[16];
  return inet_pton(AF_INET, s.c_str(), buffer) == 1 || inet_pton(AF_INET6, s.c_str(), buffer) == 1;
}

// Comma-separated values added to `list` (each checked by `check`), without duplicates.
Applied addList(std::vector<std::string>& list, std::string_view v,
                Applied (*check)(std::string_view)) {
  size_t start = 0;
  while (start <= v.size()) {
    const size_t comma = std::min(v.find(',', start), v.size());
    const std::string_view item = v.substr(start, comma - start);
    start = comma + 1;
    // "--guard-exempt-groups=" (nothing) is how a list is emptied.
    if (item.empty() && v.empty()) break;
    if (item.empty()) return fail("empty entry in " + inQuotes(v));
    if (auto ok = check(item); !ok) return ok;
    if (std::ranges::find(list, item) == list.end()) list.emplace_back(item);
  }
  return {};
}

Applied anyName(std::string_view) { return {}; }

Applied hostName(std::string_view v) {
  if (isIpAddress(std::string(v)) || k8s::isDns1123Subdomain(v)) return {};
  return fail(inQuotes(v) + " is neither a DNS name nor an IP address");
}

Applied setDuration(std::chrono::nanoseconds& out, std::string_view v) {
  auto d = parsePositiveDuration(v);
  if (!d) return std::unexpected(d.error());
  out = *d;
  return {};
}

}  // namespace

const std::vector<RunSpec>& webhookRunSpecs() {
  static const std::vector<RunSpec> specs = {
      {"webhook-bind-address", "webhookBindAddress", Kind::String, "ADDRESS", ":9443",
       "host:port serving the shard guard webhook over HTTPS; \"0\" disables the guard",
       [](RunOptions& o, std::string_view v) -> Applied {
         auto a = parseListenerFlag(v);
         if (!a) return std::unexpected(a.error());
         o.webhook_bind_address = *a;
         return {};
       }},
      {"webhook-cert-secret", "webhookCertSecret", Kind::String, "[NS/]NAME",
       "shardscaler-webhook-cert in the pod's namespace",
       "Secret where shardscaler keeps the webhook's CA and serving certificate",
       [](RunOptions& o, std::string_view v) -> Applied {
         const size_t slash = v.find('/');
         const std::string_view name = slash == std::string_view::npos ? v : v.substr(slash + 1);
         if (slash != std::string_view::npos) {
           if (auto ok = checkNamespaceName(v.substr(0, slash)); !ok) return ok;
           o.webhook_cert_secret_namespace = v.substr(0, slash);
         }
         if (auto ok = checkObjectName(name); !ok) return ok;
         o.webhook_cert_secret = name;
         return {};
       }},
      {"webhook-cert-dir", "webhookCertDir", Kind::String, "DIR", "none",
       "load tls.crt, tls.key and ca.crt from here (e.g. a cert-manager Secret) and manage "
       "neither the Secret nor the caBundle",
       [](RunOptions& o, std::string_view v) -> Applied {
         o.webhook_cert_dir = v;
         return {};
       }},
      {"webhook-configuration", "webhookConfiguration", Kind::String, "NAME", "shardscaler-guard",
       "ValidatingWebhookConfiguration whose caBundle shardscaler keeps current",
       [](RunOptions& o, std::string_view v) -> Applied {
         if (auto ok = checkObjectName(v); !ok) return ok;
         o.webhook_configuration = v;
         return {};
       }},
      {"webhook-hosts", "webhookHosts", Kind::List, "HOST",
       "shardscaler-webhook.<ns>.svc and .svc.cluster.local",
       "DNS names and IP addresses the serving certificate is for; repeat or separate with commas",
       [](RunOptions& o, std::string_view v) { return addList(o.webhook_hosts, v, hostName); },
       [](RunOptions& o) { o.webhook_hosts.clear(); }},
      {"webhook-cert-validity", "webhookCertValidity", Kind::Duration, "DURATION", "8760h",
       "lifetime of a serving certificate shardscaler issues; it is renewed at 2/3 of it",
       [](RunOptions& o, std::string_view v) { return setDuration(o.webhook_cert_validity, v); }},
      {"webhook-ca-validity", "webhookCaValidity", Kind::Duration, "DURATION", "87600h",
       "lifetime of the CA shardscaler creates",
       [](RunOptions& o, std::string_view v) { return setDuration(o.webhook_ca_validity, v); }},
      {"webhook-cert-refresh", "webhookCertRefresh", Kind::Duration, "DURATION", "30s",
       "how often every replica re-reads the certificate Secret (and re-checks the caBundle)",
       [](RunOptions& o, std::string_view v) { return setDuration(o.webhook_cert_refresh, v); }},
      {"guard-exempt-users", "guardExemptUsers", Kind::List, "USER", "none",
       "users the guard lets delete or re-attach any shard; repeat or separate with commas",
       [](RunOptions& o, std::string_view v) { return addList(o.guard_exempt_users, v, anyName); },
       [](RunOptions& o) { o.guard_exempt_users.clear(); }},
      {"guard-exempt-groups", "guardExemptGroups", Kind::List, "GROUP", "system:masters",
       "groups whose members the guard lets through; --guard-exempt-groups= exempts no group",
       [](RunOptions& o, std::string_view v) { return addList(o.guard_exempt_groups, v, anyName); },
       [](RunOptions& o) { o.guard_exempt_groups.clear(); }},
      {"guard-cleanup-users", "guardCleanupUsers", Kind::List, "USER",
       "the garbage collector, the namespace controller, system:kube-controller-manager",
       "users that may delete guarded shards once their target or namespace is being deleted",
       [](RunOptions& o, std::string_view v) { return addList(o.guard_cleanup_users, v, anyName); },
       [](RunOptions& o) { o.guard_cleanup_users.clear(); }},
      {"guard-self-user", "guardSelfUser", Kind::String, "USER",
       "found from the client certificate or a TokenReview",
       "the user shardscaler's own requests arrive as (always exempt)",
       [](RunOptions& o, std::string_view v) -> Applied {
         o.guard_self_user = v;
         return {};
       }},
  };
  return specs;
}

}  // namespace shardscaler::service::detail
