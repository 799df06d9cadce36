#include "shardscaler/service/run_options.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "option_spec.h"
#include "shardscaler/k8s_client/validation.h"

namespace shardscaler::service {
namespace detail {

std::string inQuotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::unexpected<std::string> fail(std::string message) {
  return std::unexpected(std::move(message));
}

// ---- value parsers shared by flags and the config file; messages carry no prefix ----

std::expected<bool, std::string> parseBool(std::string_view v) {
  // strconv.ParseBool, which pflag uses.
  static constexpr std::array<std::string_view, 6> kTrue = {"1", "t", "T", "true", "TRUE", "True"};
  static constexpr std::array<std::string_view, 6> kFalse = {"0",     "f",     "F",
                                                             "false", "FALSE", "False"};
  if (std::ranges::find(kTrue, v) != kTrue.end()) return true;
  if (std::ranges::find(kFalse, v) != kFalse.end()) return false;
  return fail(inQuotes(v) + " is not a boolean (true or false)");
}

std::expected<int, std::string> parseInt(std::string_view v, int min, int max) {
  int out = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || end != v.data() + v.size() ||
      (ec != std::errc() && ec != std::errc::result_out_of_range)) {
    return fail(inQuotes(v) + " is not a number");
  }
  if (ec == std::errc::result_out_of_range || out < min || out > max) {
    return fail("must be between " + std::to_string(min) + " and " + std::to_string(max) +
                ", got " + std::string(v));
  }
  return out;
}

Applied checkNamespaceName(std::string_view v) {
  if (k8s::isDns1123Label(v)) return {};
  return fail(inQuotes(v) +
              " is not a valid namespace name (lowercase letters, digits and '-', at most 63)");
}

Applied checkObjectName(std::string_view v) {
  if (k8s::isDns1123Subdomain(v)) return {};
  return fail(inQuotes(v) +
              " is not a valid object name (lowercase letters, digits, '-' and '.', at most 253)");
}

std::expected<std::chrono::nanoseconds, std::string> parsePositiveDuration(std::string_view v) {
  auto d = parseGoDuration(v);
  if (!d) return std::unexpected(d.error());
  if (d->count() <= 0) return fail("must be greater than 0, got " + inQuotes(v));
  return *d;
}

std::expected<std::optional<BindAddress>, std::string> parseListenerFlag(std::string_view v) {
  if (v == "0") return std::optional<BindAddress>{};  // controller-runtime: "0" disables it
  auto a = parseBindAddress(v);
  if (!a) return std::unexpected(a.error());
  return std::optional<BindAddress>{*a};
}

// ---- the option tables: one row per flag, shared by the parser, the config file and --help ----
// (OptionSpec is in option_spec.h; the webhook and guard rows in webhook_options.cc.)

}  // namespace detail
namespace {

using namespace detail;

constexpr std::string_view kConfigFlag = "config";

const std::vector<RunSpec>& runSpecs() {
  static const std::vector<RunSpec> base = {
      {"config", "", Kind::String, "PATH", "none",
       "YAML file with these options, keys in camelCase (flags win over the file)",
       [](RunOptions& o, std::string_view v) -> Applied {
         o.config_file = v;
         return {};
       }},
      {"kubeconfig", "kubeconfig", Kind::String, "PATH", "$KUBECONFIG, else in-cluster",
       "kubeconfig file to reach the API server",
       [](RunOptions& o, std::string_view v) -> Applied {
         o.kubeconfig = v;
         return {};
       }},
      {"namespace", "namespaces", Kind::List, "NS", "all namespaces",
       "namespace to watch; repeat the flag (or separate with commas) for several",
       [](RunOptions& o, std::string_view v) -> Applied {
         if (v.empty()) return fail("empty namespace name");
         size_t start = 0;
         while (start <= v.size()) {
           const size_t comma = std::min(v.find(',', start), v.size());
           const std::string_view ns = v.substr(start, comma - start);
           if (auto ok = checkNamespaceName(ns); !ok) return ok;
           if (std::ranges::find(o.namespaces, ns) == o.namespaces.end()) {
             o.namespaces.emplace_back(ns);
           }
           start = comma + 1;
         }
         return {};
       },
       [](RunOptions& o) { o.namespaces.clear(); }},
      {"metrics-bind-address", "metricsBindAddress", Kind::String, "ADDRESS", ":8080",
       "host:port serving /metrics; \"0\" disables it",
       [](RunOptions& o, std::string_view v) -> Applied {
         auto a = parseListenerFlag(v);
         if (!a) return std::unexpected(a.error());
         o.metrics_bind_address = *a;
         return {};
       }},
      {"health-probe-bind-address", "healthProbeBindAddress", Kind::String, "ADDRESS", ":8081",
       "host:port serving /healthz and /readyz; \"0\" disables it",
       [](RunOptions& o, std::string_view v) -> Applied {
         auto a = parseListenerFlag(v);
         if (!a) return std::unexpected(a.error());
         o.health_probe_bind_address = *a;
         return {};
       }},
      {"leader-elect", "leaderElect", Kind::Bool, "", "true",
       "hold a coordination.k8s.io Lease so only one replica acts",
       [](RunOptions& o, std::string_view v) -> Applied {
         auto b = parseBool(v);
         if (!b) return std::unexpected(b.error());
         o.leader_elect = *b;
         return {};
       }},
      {"leader-election-id", "leaderElectionId", Kind::String, "NAME", "shardscaler",
       "name of the Lease",
       [](RunOptions& o, std::string_view v) -> Applied {
         if (auto ok = checkObjectName(v); !ok) return ok;
         o.leader_election_id = v;
         return {};
       }},
      {"leader-election-namespace", "leaderElectionNamespace", Kind::String, "NS",
       "the pod's namespace, else default", "namespace of the Lease",
       [](RunOptions& o, std::string_view v) -> Applied {
         if (!v.empty()) {
           if (auto ok = checkNamespaceName(v); !ok) return ok;
         }
         o.leader_election_namespace = v;
         return {};
       }},
      {"lease-duration", "leaseDuration", Kind::Duration, "DURATION", "15s",
       "how long non-leaders wait before taking over an unrenewed Lease",
       [](RunOptions& o, std::string_view v) -> Applied {
         auto d = parsePositiveDuration(v);
         if (!d) return std::unexpected(d.error());
         o.lease_duration = *d;
         return {};
       }},
      {"renew-deadline", "renewDeadline", Kind::Duration, "DURATION", "10s",
       "how long the leader keeps retrying to renew before it gives up leadership",
       [](RunOptions& o, std::string_view v) -> Applied {
         auto d = parsePositiveDuration(v);
         if (!d) return std::unexpected(d.error());
         o.renew_deadline = *d;
         return {};
       }},
      {"retry-period", "retryPeriod", Kind::Duration, "DURATION", "2s",
       "wait between attempts to acquire or renew the Lease",
       [](RunOptions& o, std::string_view v) -> Applied {
         auto d = parsePositiveDuration(v);
         if (!d) return std::unexpected(d.error());
         o.retry_period = *d;
         return {};
       }},
      {"workers", "workers", Kind::Int, "N", "8", "ShardSets reconciled in parallel",
       [](RunOptions& o, std::string_view v) -> Applied {
         auto n = parseInt(v, 1, 1024);
         if (!n) return std::unexpected(n.error());
         o.workers = *n;
         return {};
       }},
      {"log-level", "logLevel", Kind::String, "LEVEL", "info", "debug, info, warn or error",
       [](RunOptions& o, std::string_view v) -> Applied {
         auto l = telemetry::parseLogLevel(v);
         if (!l) return std::unexpected(l.error());
         o.log_level = *l;
         return {};
       }},
      {"log-format", "logFormat", Kind::String, "FORMAT", "text",
       "text (key=value) or json (one object per line)",
       [](RunOptions& o, std::string_view v) -> Applied {
         auto f = telemetry::parseLogFormat(v);
         if (!f) return std::unexpected(f.error());
         o.log_format = *f;
         return {};
       }},
      {"identity", "identity", Kind::String, "ID", "<hostname>_<random uuid>",
       "holder identity written into the Lease",
       [](RunOptions& o, std::string_view v) -> Applied {
         o.identity = v;
         return {};
       }},
      {"shutdown-timeout", "shutdownTimeout", Kind::Duration, "DURATION", "10s",
       "on SIGTERM, how long to wait for the reconciles in flight before exiting",
       [](RunOptions& o, std::string_view v) -> Applied {
         auto d = parsePositiveDuration(v);
         if (!d) return std::unexpected(d.error());
         o.shutdown_timeout = *d;
         return {};
       }},
      {"settle-time", "settleTime", Kind::Duration, "DURATION", "10s",
       "without the admission guard: how long a transition waits after the pause and after the "
       "last detach, so an operator acting on a view this much older still cannot delete a "
       "shard",
       [](RunOptions& o, std::string_view v) -> Applied {
         auto d = parsePositiveDuration(v);
         if (!d) return std::unexpected(d.error());
         o.settle_time = *d;
         return {};
       }},
      {"pause-ack-timeout", "pauseAckTimeout", Kind::Duration, "DURATION", "30s",
       "without the admission guard: how long to wait for the operator to report a pause before "
       "undoing the transition",
       [](RunOptions& o, std::string_view v) -> Applied {
         auto d = parsePositiveDuration(v);
         if (!d) return std::unexpected(d.error());
         o.pause_ack_timeout = *d;
         return {};
       }},
  };
  static const std::vector<RunSpec> specs = [] {
    std::vector<RunSpec> all = base;
    const auto& webhook = webhookRunSpecs();
    all.insert(all.end(), webhook.begin(), webhook.end());
    const auto& metrics_api = metricsApiRunSpecs();
    all.insert(all.end(), metrics_api.begin(), metrics_api.end());
    return all;
  }();
  return specs;
}

const std::vector<PlanSpec>& planSpecs() {
  static const std::vector<PlanSpec> specs = {
      {"shardset", "", Kind::String, "NS/NAME", "required", "the ShardSet to plan for",
       [](PlanOptions& o, std::string_view v) -> Applied {
         const size_t slash = v.find('/');
         if (slash == std::string_view::npos) {
           return fail(inQuotes(v) + " must be NAMESPACE/NAME");
         }
         const std::string_view ns = v.substr(0, slash);
         const std::string_view name = v.substr(slash + 1);
         if (auto ok = checkNamespaceName(ns); !ok) return ok;
         if (auto ok = checkObjectName(name); !ok) return ok;
         o.shardset_namespace = ns;
         o.shardset_name = name;
         return {};
       }},
      {"shards", "", Kind::Int, "N", "required", "the shard count to plan a scale to",
       [](PlanOptions& o, std::string_view v) -> Applied {
         auto n = parseInt(v, 0, 100000);
         if (!n) return std::unexpected(n.error());
         o.shards = *n;
         return {};
       }},
      {"kubeconfig", "", Kind::String, "PATH", "$KUBECONFIG, else in-cluster",
       "kubeconfig file to reach the API server",
       [](PlanOptions& o, std::string_view v) -> Applied {
         o.kubeconfig = v;
         return {};
       }},
  };
  return specs;
}

// ---- flag scanning ----

size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// ` (did you mean "x"?)` when one candidate is close, else "".
std::string suggestion(std::string_view given, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = 3;
  for (const auto& c : candidates) {
    std::string lower_given(given);
    std::string lower_c(c);
    std::ranges::transform(lower_given, lower_given.begin(), ::tolower);
    std::ranges::transform(lower_c, lower_c.begin(), ::tolower);
    const size_t d = lower_given == lower_c ? 0 : editDistance(lower_given, lower_c);
    if (d < best_distance) best_distance = d, best = c;
  }
  return best.empty() ? "" : " (did you mean " + inQuotes(best) + "?)";
}

template <typename Options>
struct FlagValue {
  const OptionSpec<Options>* spec;
  std::string value;
};

template <typename Options>
struct ScannedFlags {
  bool help = false;
  std::vector<FlagValue<Options>> values;  // in command-line order
};

template <typename Options>
std::expected<ScannedFlags<Options>, std::string> scanFlags(
    std::span<const std::string_view> args, const std::vector<OptionSpec<Options>>& specs) {
  ScannedFlags<Options> out;
  auto find = [&](std::string_view name) -> const OptionSpec<Options>* {
    for (const auto& s : specs) {
      if (s.flag == name) return &s;
    }
    return nullptr;
  };
  auto unknown = [&](std::string_view arg, std::string_view name) {
    std::vector<std::string> names;
    names.reserve(specs.size());
    for (const auto& s : specs) names.push_back("--" + std::string(s.flag));
    return fail("unknown flag " + inQuotes(arg) + suggestion("--" + std::string(name), names));
  };
  const OptionSpec<Options>* previous_bool = nullptr;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (arg == "-h" || arg == "--help") {
      out.help = true;
      return out;
    }
    if (arg == "--") {
      if (i + 1 < args.size()) return fail("unexpected argument " + inQuotes(args[i + 1]));
      break;
    }
    if (!arg.starts_with("-") || arg == "-") {
      std::string hint;
      if (previous_bool != nullptr && parseBool(arg)) {
        hint = " (a boolean flag takes its value with '=': --" + std::string(previous_bool->flag) +
               "=" + std::string(arg) + ")";
      }
      return fail("unexpected argument " + inQuotes(arg) + hint);
    }
    previous_bool = nullptr;
    if (!arg.starts_with("--")) {
      const std::string_view name = arg.substr(1, arg.find('=') - 1);
      return unknown(arg.substr(0, arg.find('=')), name);
    }
    const size_t eq = arg.find('=');
    const std::string_view name = arg.substr(2, eq == std::string_view::npos ? eq : eq - 2);
    const OptionSpec<Options>* spec = find(name);
    if (spec == nullptr) return unknown(arg.substr(0, eq), name);
    std::string value;
    if (eq != std::string_view::npos) {
      value = arg.substr(eq + 1);
    } else if (spec->kind == Kind::Bool) {
      value = "true";
      previous_bool = spec;
    } else if (i + 1 < args.size() && !args[i + 1].starts_with("--")) {
      value = args[++i];
    } else {
      return fail("--" + std::string(name) + ": missing value (" + std::string(spec->value_name) +
                  ")");
    }
    out.values.push_back({spec, std::move(value)});
  }
  return out;
}

template <typename Options>
Applied applyFlags(Options& options, const std::vector<FlagValue<Options>>& values) {
  std::set<std::string_view> lists_replaced;
  for (const auto& [spec, value] : values) {
    // A list given on the command line replaces the config file's list (or the default) rather
    // than extending it.
    if (spec->reset != nullptr && lists_replaced.insert(spec->flag).second) spec->reset(options);
    if (auto ok = spec->apply(options, value); !ok) {
      return fail("--" + std::string(spec->flag) + ": " + ok.error());
    }
  }
  return {};
}

// ---- the config file ----

std::string nodeDescription(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "nothing";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Scalar:
      return (node.Tag() == "!" ? "the quoted string " : "") + inQuotes(node.Scalar());
    case YAML::NodeType::Undefined:
      break;
  }
  return "nothing";
}

// The scalar text of `value` if it has the type `kind` wants, else a "wrong type" message.
std::expected<std::string, std::string> scalarFor(Kind kind, const YAML::Node& value) {
  if (!value.IsScalar()) {
    const char* want = kind == Kind::Bool       ? "true or false"
                       : kind == Kind::Int      ? "a number"
                       : kind == Kind::Duration ? "a duration such as 10s"
                                                : "a string";
    return fail(std::string("expected ") + want + ", got " + nodeDescription(value));
  }
  // A quoted "true" or "3" is a string in YAML; accepting it would hide a typing mistake.
  if ((kind == Kind::Bool || kind == Kind::Int) && value.Tag() == "!") {
    return fail(std::string("expected ") + (kind == Kind::Bool ? "true or false" : "a number") +
                ", got " + nodeDescription(value));
  }
  return value.Scalar();
}

std::string lineOf(const YAML::Node& node) {
  return "line " + std::to_string(node.Mark().line + 1);
}

Applied applyConfigFile(RunOptions& options, const std::string& path) {
  const std::string prefix = "config file " + path + ": ";
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return fail(prefix + "is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(prefix + std::strerror(errno));
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return fail(prefix + "cannot read: " + std::strerror(errno));

  YAML::Node root;
  try {
    root = YAML::Load(buffer.str());
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) return fail(prefix + e.msg);
    return fail(prefix + "line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  if (root.IsNull()) return {};  // an empty file sets nothing
  if (!root.IsMap()) {
    return fail(prefix + lineOf(root) + ": expected a mapping of option names to values, got " +
                nodeDescription(root));
  }

  std::vector<std::string> keys;
  for (const auto& s : runSpecs()) {
    if (!s.yaml_key.empty()) keys.emplace_back(s.yaml_key);
  }
  std::set<std::string> seen;
  for (const auto& entry : root) {
    const YAML::Node& key = entry.first;
    const YAML::Node& value = entry.second;
    if (!key.IsScalar()) return fail(prefix + lineOf(key) + ": keys must be option names");
    const std::string& name = key.Scalar();
    const RunSpec* spec = nullptr;
    for (const auto& s : runSpecs()) {
      if (!s.yaml_key.empty() && s.yaml_key == name) spec = &s;
    }
    if (spec == nullptr) {
      return fail(prefix + lineOf(key) + ": unknown key " + inQuotes(name) +
                  suggestion(name, keys));
    }
    if (!seen.insert(name).second) {
      return fail(prefix + lineOf(key) + ": duplicate key " + inQuotes(name));
    }
    // A missing value has the position of whatever follows it; the key's line is the one to fix.
    std::string where = prefix;
    where += lineOf(value.IsNull() ? key : value) + ": ";
    where += name + ": ";
    if (spec->kind == Kind::List) {
      if (!value.IsSequence()) {
        return fail(where + "expected a list, got " + nodeDescription(value));
      }
      if (spec->reset != nullptr) spec->reset(options);  // the file's list replaces the default
      for (const auto& item : value) {
        std::string item_where = prefix;
        item_where += lineOf(item) + ": ";
        item_where += name + ": ";
        auto text = scalarFor(Kind::String, item);
        if (!text) return fail(item_where + text.error());
        if (auto ok = spec->apply(options, *text); !ok) return fail(item_where + ok.error());
      }
      continue;
    }
    auto text = scalarFor(spec->kind, value);
    if (!text) return fail(where + text.error());
    if (auto ok = spec->apply(options, *text); !ok) return fail(where + ok.error());
  }
  return {};
}

Applied checkLeaderElection(const RunOptions& o) {
  // client-go's leaderelection.NewLeaderElector rules (JitterFactor 1.2).
  if (o.lease_duration <= o.renew_deadline) {
    return fail("--lease-duration (" + formatGoDuration(o.lease_duration) +
                ") must be greater than --renew-deadline (" + formatGoDuration(o.renew_deadline) +
                ")");
  }
  if (static_cast<long double>(o.renew_deadline.count()) <=
      1.2L * static_cast<long double>(o.retry_period.count())) {
    return fail("--renew-deadline (" + formatGoDuration(o.renew_deadline) +
                ") must be greater than 1.2 x --retry-period (" + formatGoDuration(o.retry_period) +
                ")");
  }
  return {};
}

std::expected<Command, std::string> parseRun(std::span<const std::string_view> args,
                                             const OptionsEnvironment& env) {
  auto scanned = scanFlags(args, runSpecs());
  if (!scanned) return std::unexpected(scanned.error());
  if (scanned->help) return HelpCommand{runHelp()};

  RunOptions options;
  for (const auto& [spec, value] : scanned->values) {
    if (spec->flag == kConfigFlag) {
      if (value.empty()) return fail("--config: empty path");
      options.config_file = value;
    }
  }
  if (!options.config_file.empty()) {
    if (auto ok = applyConfigFile(options, options.config_file); !ok) {
      return std::unexpected(ok.error());
    }
  }
  if (auto ok = applyFlags(options, scanned->values); !ok) return std::unexpected(ok.error());

  if (options.leader_election_namespace.empty()) {
    options.leader_election_namespace = env.pod_namespace.value_or("default");
  }
  if (options.identity.empty()) options.identity = env.default_identity;
  const std::string pod_namespace = env.pod_namespace.value_or("default");
  if (options.webhook_cert_secret_namespace.empty()) {
    options.webhook_cert_secret_namespace = pod_namespace;
  }
  if (options.webhook_hosts.empty()) {
    const std::string service = std::string(kWebhookServiceName) + "." + pod_namespace + ".svc";
    options.webhook_hosts = {service, service + ".cluster.local"};
  }
  if (auto ok = finishMetricsApiOptions(options, pod_namespace); !ok) {
    return std::unexpected(ok.error());
  }
  if (options.webhook_cert_validity > options.webhook_ca_validity) {
    return fail("--webhook-cert-validity (" + formatGoDuration(options.webhook_cert_validity) +
                ") must not exceed --webhook-ca-validity (" +
                formatGoDuration(options.webhook_ca_validity) + ")");
  }
  if (options.leader_elect) {
    if (auto ok = checkLeaderElection(options); !ok) return std::unexpected(ok.error());
  }
  return options;
}

std::expected<Command, std::string> parsePlan(std::span<const std::string_view> args) {
  auto scanned = scanFlags(args, planSpecs());
  if (!scanned) return std::unexpected(scanned.error());
  if (scanned->help) return HelpCommand{planHelp()};
  PlanOptions options;
  if (auto ok = applyFlags(options, scanned->values); !ok) return std::unexpected(ok.error());
  for (std::string_view required : {"shardset", "shards"}) {
    const bool given = std::ranges::any_of(
        scanned->values, [&](const FlagValue<PlanOptions>& v) { return v.spec->flag == required; });
    if (!given) return fail("plan: --" + std::string(required) + " is required");
  }
  return options;
}

template <typename Options>
std::string helpText(std::string_view usage, std::string_view about,
                     const std::vector<OptionSpec<Options>>& specs, std::string_view footer) {
  std::vector<std::pair<std::string, std::string>> rows;
  for (const auto& s : specs) {
    std::string left = "  --" + std::string(s.flag);
    if (!s.value_name.empty()) left += " " + std::string(s.value_name);
    const std::string dflt = s.default_text == "required"
                                 ? " (required)"
                                 : " (default: " + std::string(s.default_text) + ")";
    rows.emplace_back(std::move(left), std::string(s.help) + dflt);
  }
  rows.emplace_back("  -h, --help", "show this help");
  size_t width = 0;
  for (const auto& [left, right] : rows) width = std::max(width, left.size());
  std::string out = "Usage: " + std::string(usage) + "\n\n" + std::string(about) + "\n\nFlags:\n";
  for (auto& [left, right] : rows) {
    left.resize(width + 3, ' ');
    out += left + right + "\n";
  }
  if (!footer.empty()) out += "\n" + std::string(footer) + "\n";
  return out;
}

std::string randomUuid() {
  std::random_device rd;
  std::array<unsigned char, 16> b{};
  for (size_t i = 0; i < b.size(); i += 4) {
    const auto r = rd();
    for (size_t k = 0; k < 4; ++k) b[i + k] = static_cast<unsigned char>(r >> (8 * k));
  }
  b[6] = (b[6] & 0x0F) | 0x40;  // version 4
  b[8] = (b[8] & 0x3F) | 0x80;  // RFC 4122 variant
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < b.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[b[i] >> 4];
    out += kHex[b[i] & 0xF];
  }
  return out;
}

}  // namespace

std::expected<BindAddress, std::string> parseBindAddress(std::string_view text) {
  const auto bad = [&](const std::string& why) {
    return fail(inQuotes(text) + " is not host:port (" + why + "; e.g. :8080 or 127.0.0.1:0)");
  };
  std::string_view host;
  std::string_view port;
  if (text.starts_with("[")) {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return bad("missing ']'");
    host = text.substr(1, close - 1);
    if (close + 1 >= text.size() || text[close + 1] != ':') return bad("missing port");
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return bad("missing port");
    host = text.substr(0, colon);
    if (host.find(':') != std::string_view::npos) return bad("IPv6 hosts go in brackets");
    port = text.substr(colon + 1);
  }
  if (host.find_first_of(" \t/[]") != std::string_view::npos) return bad("bad host");
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || end != port.data() + port.size() || ec != std::errc()) {
    return bad("port " + inQuotes(port) + " is not a number");
  }
  if (value > 65535) return bad("port " + std::string(port) + " is out of range 0-65535");
  return BindAddress{std::string(host), static_cast<std::uint16_t>(value)};
}

std::expected<std::chrono::nanoseconds, std::string> parseGoDuration(std::string_view text) {
  const std::string syntax = " (use Go syntax such as 10s, 1m30s or 250ms)";
  const auto bad = [&](const std::string& why) {
    return fail(inQuotes(text) + " is not a duration" + (why.empty() ? "" : ": " + why) + syntax);
  };
  std::string_view s = text;
  if (s.starts_with("-")) return fail(inQuotes(text) + " is negative");
  if (s.starts_with("+")) s.remove_prefix(1);
  if (s == "0") return std::chrono::nanoseconds(0);
  if (s.empty()) return bad("");
  struct Unit {
    std::string_view name;
    std::uint64_t ns;
  };
  static constexpr std::array<Unit, 8> kUnits = {{{"ns", 1},
                                                  {"us", 1'000},
                                                  {"\xC2\xB5s", 1'000},  // U+00B5
                                                  {"\xCE\xBCs", 1'000},  // U+03BC
                                                  {"ms", 1'000'000},
                                                  {"s", 1'000'000'000},
                                                  {"m", 60'000'000'000},
                                                  {"h", 3'600'000'000'000}}};
  constexpr std::uint64_t kMax = std::numeric_limits<std::int64_t>::max();
  std::uint64_t total = 0;
  while (!s.empty()) {
    std::uint64_t whole = 0;
    size_t i = 0;
    bool overflow = false;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (whole > (kMax - 9) / 10) overflow = true;
      whole = whole * 10 + static_cast<std::uint64_t>(s[i] - '0');
      ++i;
    }
    const size_t whole_digits = i;
    std::uint64_t frac = 0;
    std::uint64_t frac_scale = 1;
    size_t frac_digits = 0;
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        // Digits beyond nanosecond precision cannot change the result; drop them.
        if (frac_scale < 1'000'000'000'000'000ULL) {
          frac = frac * 10 + static_cast<std::uint64_t>(s[i] - '0');
          frac_scale *= 10;
        }
        ++i, ++frac_digits;
      }
    }
    if (whole_digits == 0 && frac_digits == 0) return bad("");
    const size_t unit_start = i;
    while (i < s.size() && s[i] != '.' && (s[i] < '0' || s[i] > '9')) ++i;
    const std::string_view unit_name = s.substr(unit_start, i - unit_start);
    if (unit_name.empty()) return bad("missing unit");
    const auto unit =
        std::ranges::find_if(kUnits, [&](const Unit& u) { return u.name == unit_name; });
    if (unit == kUnits.end()) {
      return bad("unknown unit " + inQuotes(unit_name) + ", use ns, us, ms, s, m or h");
    }
    if (overflow || whole > kMax / unit->ns) return fail(inQuotes(text) + " is too large");
    std::uint64_t value = whole * unit->ns;
    // frac < frac_scale <= 1e18 and unit <= 3.6e12: the product may overflow, so scale first.
    const long double part =
        static_cast<long double>(frac) * static_cast<long double>(unit->ns) / frac_scale;
    value += static_cast<std::uint64_t>(part);
    if (value > kMax || total > kMax - value) return fail(inQuotes(text) + " is too large");
    total += value;
    s.remove_prefix(i);
  }
  return std::chrono::nanoseconds(static_cast<std::int64_t>(total));
}

std::string formatGoDuration(std::chrono::nanoseconds d) {
  // time.Duration.String.
  std::int64_t ns = d.count();
  if (ns == 0) return "0s";
  std::string sign = ns < 0 ? "-" : "";
  std::uint64_t u =
      ns < 0 ? static_cast<std::uint64_t>(-(ns + 1)) + 1 : static_cast<std::uint64_t>(ns);
  auto fraction = [](std::uint64_t v, std::uint64_t scale) {
    // v / scale with trailing zeros of the fraction dropped.
    std::string out = std::to_string(v / scale);
    std::uint64_t rest = v % scale;
    if (rest == 0) return out;
    std::string digits;
    for (std::uint64_t s = scale / 10; s > 0; s /= 10) {
      digits += static_cast<char>('0' + (rest / s) % 10);
    }
    while (!digits.empty() && digits.back() == '0') digits.pop_back();
    return out + "." + digits;
  };
  if (u < 1'000) return sign + std::to_string(u) + "ns";
  if (u < 1'000'000) return sign + fraction(u, 1'000) + "\xC2\xB5s";
  if (u < 1'000'000'000) return sign + fraction(u, 1'000'000) + "ms";
  const std::uint64_t hours = u / 3'600'000'000'000;
  u %= 3'600'000'000'000;
  const std::uint64_t minutes = u / 60'000'000'000;
  u %= 60'000'000'000;
  std::string out = sign;
  if (hours > 0) out += std::to_string(hours) + "h";
  if (hours > 0 || minutes > 0) out += std::to_string(minutes) + "m";
  return out + fraction(u, 1'000'000'000) + "s";
}

OptionsEnvironment OptionsEnvironment::fromProcess() {
  OptionsEnvironment env;
  std::ifstream ns_file("/var/run/secrets/kubernetes.io/serviceaccount/namespace");
  std::string ns;
  if (ns_file && std::getline(ns_file, ns)) {
    const auto first = ns.find_first_not_of(" \t\r\n");
    const auto last = ns.find_last_not_of(" \t\r\n");
    if (first != std::string::npos) env.pod_namespace = ns.substr(first, last - first + 1);
  }
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0 || host[0] == '\0') {
    std::strcpy(host.data(), "shardscaler");
  }
  // controller-runtime's default: the hostname makes the holder readable, the UUID unique
  // across restarts of the same pod.
  env.default_identity = std::string(host.data()) + "_" + randomUuid();
  return env;
}

std::expected<Command, std::string> parseCommandLine(std::span<const std::string_view> args,
                                                     const OptionsEnvironment& env) {
  if (args.empty()) return fail("missing command (run, plan or version); see shardscaler --help");
  const std::string_view command = args[0];
  const auto rest = args.subspan(1);
  if (command == "-h" || command == "--help") return HelpCommand{mainHelp()};
  if (command == "help") {
    if (rest.empty()) return HelpCommand{mainHelp()};
    if (rest[0] == "run") return HelpCommand{runHelp()};
    if (rest[0] == "plan") return HelpCommand{planHelp()};
    if (rest[0] == "version") return HelpCommand{versionHelp()};
    return fail("unknown command " + inQuotes(rest[0]) + " (run, plan or version)");
  }
  if (command == "run") return parseRun(rest, env);
  if (command == "plan") return parsePlan(rest);
  if (command == "version") {
    static const std::vector<OptionSpec<VersionCommand>> no_flags;
    auto scanned = scanFlags(rest, no_flags);
    if (!scanned) return std::unexpected(scanned.error());
    if (scanned->help) return HelpCommand{versionHelp()};
    return VersionCommand{};
  }
  if (command.starts_with("-")) {
    return fail("unknown flag " + inQuotes(command) +
                " (flags go after the command: run, plan or version)");
  }
  return fail("unknown command " + inQuotes(command) + " (run, plan or version)" +
              suggestion(command, {"run", "plan", "version"}));
}

std::expected<Command, std::string> parseCommandLine(int argc, const char* const* argv,
                                                     const OptionsEnvironment& env) {
  std::vector<std::string_view> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return parseCommandLine(std::span<const std::string_view>(args), env);
}

std::string mainHelp() {
  return "shardscaler changes the shard count of Prometheus and PrometheusAgent objects through a\n"
         "ShardSet (scale subresource) and keeps the data of removed shards as long as asked.\n"
         "\n"
         "Usage: shardscaler <command> [flags]\n"
         "\n"
         "Commands:\n"
         "  run       run the controller\n"
         "  plan      print, without writing, the steps a scale to N shards would take\n"
         "  version   print the version and the git commit\n"
         "\n"
         "Run 'shardscaler <command> --help' for the flags of a command.\n";
}

std::string runHelp() {
  return helpText(
      "shardscaler run [flags]",
      "Runs the ShardSet controller and serves /metrics, /healthz and /readyz, and on every\n"
      "replica the shard guard, an admission webhook that refuses deleting active shards and\n"
      "retained ones before their deadline (POST /guard/statefulsets over HTTPS).\n"
      "SIGTERM or SIGINT: stop taking work, finish the reconciles in flight, release the Lease.",
      runSpecs(),
      "Flags take --flag=value or --flag value; booleans --flag or --flag=false.\n"
      "Durations use Go syntax (10s, 1m30s). The --config file uses the flag names in camelCase\n"
      "(metricsBindAddress, leaderElect, leaderElectionId, ...), with namespaces: [a, b] for\n"
      "--namespace (lists also for the other repeatable flags); flags given on the command line\n"
      "win over the file.");
}

std::string planHelp() {
  return helpText("shardscaler plan --shardset NS/NAME --shards N [flags]",
                  "Prints, without writing anything, the steps a scale of the ShardSet to N "
                  "shards would take.",
                  planSpecs(), "");
}

std::string versionHelp() {
  return "Usage: shardscaler version\n\nPrints the version and the git commit shardscaler was "
         "built from.\n\nFlags:\n  -h, --help   show this help\n";
}

}  // namespace shardscaler::service
