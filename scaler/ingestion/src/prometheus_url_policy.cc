#include "shardscaler/ingestion/prometheus_url_policy.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "shardscaler/base/expected.h"

namespace shardscaler::ingestion {
namespace {

constexpr std::size_t kMaxUrlInMessage = 200;
constexpr std::size_t kMaxLabelLength = 63;
constexpr std::size_t kMaxNameLength = 253;

// User input in a message: bounded, and printable ASCII only (it ends up in JSON and in Events).
std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text.substr(0, kMaxUrlInMessage)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  out += text.size() > kMaxUrlInMessage ? "...\"" : "\"";
  return out;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool isNameCharacter(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
}

// A DNS name (which includes an IPv4 address): labels of letters, digits, '-' and '_'.
bool isHostName(std::string_view host) {
  if (host.empty() || host.size() > kMaxNameLength) return false;
  std::size_t label = 0;
  for (std::size_t i = 0; i <= host.size(); ++i) {
    if (i == host.size() || host[i] == '.') {
      if (label == 0 || label > kMaxLabelLength) return false;
      label = 0;
    } else if (isNameCharacter(host[i])) {
      ++label;
    } else {
      return false;
    }
  }
  return true;
}

bool isIpv6Address(std::string_view host) {
  return !host.empty() && host.find(':') != std::string_view::npos &&
         std::ranges::all_of(host, [](char c) {
           return std::isxdigit(static_cast<unsigned char>(c)) != 0 || c == ':' || c == '.';
         });
}

struct Parsed {
  PrometheusUrl url;
  bool any_host = false;
  bool host_is_suffix = false;
  bool any_port = false;
};

// What a URL may not contain anywhere; nullopt when none of it is there.
std::optional<std::string> refusedCharacters(std::string_view text) {
  if (text.size() > kMaxPrometheusUrlLength) {
    return "is longer than " + std::to_string(kMaxPrometheusUrlLength) + " characters";
  }
  if (!std::ranges::all_of(text, [](char c) { return c > 0x20 && c < 0x7f; })) {
    return "must be printable ASCII without spaces";
  }
  if (text.find('?') != std::string_view::npos) {
    return "must not have a query (\"?...\"): the parameters sent to Prometheus are shardscaler's";
  }
  if (text.find('#') != std::string_view::npos) return "must not have a fragment (\"#...\")";
  if (text.find('\\') != std::string_view::npos) return "must not contain a backslash";
  return std::nullopt;
}

// The host of `authority` into out.url.host (with `pattern`, "*" or a "*." suffix), and its port
// text, if any, into *port.
std::optional<std::string> readHost(std::string_view authority, bool pattern, Parsed& out,
                                    std::optional<std::string_view>* port) {
  std::string_view host = authority;
  if (authority.starts_with('[')) {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return "has no ']'";
    host = authority.substr(1, close - 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return "has text after ']'";
      *port = after.substr(1);
    }
    if (!isIpv6Address(host)) return "has no IPv6 address in brackets: " + quoted(host);
  } else {
    const std::size_t colon = authority.find(':');
    if (colon != std::string_view::npos) {
      host = authority.substr(0, colon);
      *port = authority.substr(colon + 1);
    }
    if (pattern && host == "*") {
      out.any_host = true;
    } else {
      if (pattern && host.starts_with("*.")) {
        out.host_is_suffix = true;
        host.remove_prefix(2);
      }
      if (!isHostName(host)) {
        return host.empty() ? std::string("has no host")
                            : "has no valid host name: " + quoted(host);
      }
    }
  }
  out.url.host = lower(host);
  return std::nullopt;
}

// The port into out.url (the scheme's default without one; with `pattern`, "*" for any).
std::optional<std::string> readPort(std::optional<std::string_view> port, bool pattern,
                                    Parsed& out) {
  out.url.port = out.url.scheme == "https" ? 443 : 80;
  if (port && pattern && *port == "*") {
    out.any_port = true;
  } else if (port) {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port->data(), port->data() + port->size(), value);
    if (port->empty() || ec != std::errc() || end != port->data() + port->size() || value == 0 ||
        value > 65535) {
      return "has no valid port: " + quoted(*port);
    }
    out.url.port = static_cast<uint16_t>(value);
  }
  return std::nullopt;
}

// The path into out.url, without trailing slashes; no percent-encoding, no "@", no "." or "..".
std::optional<std::string> readPath(std::string_view path, Parsed& out) {
  if (path.find('%') != std::string_view::npos) return "must not percent-encode its path";
  if (path.find('@') != std::string_view::npos) {
    return "must not have an \"@\" in its path: a Prometheus API path has none, and one reads like "
           "credentials";
  }
  while (path.ends_with('/')) path.remove_suffix(1);
  for (std::size_t start = 0; start < path.size();) {
    const std::size_t end = std::min(path.find('/', start + 1), path.size());
    const std::string_view segment = path.substr(start + 1, end - start - 1);
    if (segment == "." || segment == "..") return "must not have a \".\" or \"..\" path segment";
    start = end;
  }
  out.url.path = std::string(path);
  return std::nullopt;
}

// Reads a URL, or with `pattern` an allow-list entry (wildcards in the host and the port).
Expected<Parsed> readUrl(std::string_view text, bool pattern) {
  if (auto refused = refusedCharacters(text)) return std::unexpected(std::move(*refused));
  Parsed out;
  const std::size_t scheme_end = text.find("://");
  out.url.scheme = lower(text.substr(0, scheme_end));
  if (scheme_end == std::string_view::npos ||
      (out.url.scheme != "http" && out.url.scheme != "https")) {
    return std::unexpected(std::string("must start with http:// or https://"));
  }
  const std::string_view rest = text.substr(scheme_end + 3);
  const std::string_view authority = rest.substr(0, rest.find('/'));
  if (authority.find('@') != std::string_view::npos) {
    return std::unexpected(std::string("must not carry credentials (\"user:password@\")"));
  }
  std::optional<std::string_view> port;
  if (auto bad = readHost(authority, pattern, out, &port)) return std::unexpected(std::move(*bad));
  if (auto bad = readPort(port, pattern, out)) return std::unexpected(std::move(*bad));
  if (auto bad = readPath(rest.substr(authority.size()), out)) {
    return std::unexpected(std::move(*bad));
  }
  return out;
}

}  // namespace

const std::vector<std::string>& defaultPrometheusUrlAllow() {
  static const std::vector<std::string> allow = {
      "http://*.svc:9090",
      "https://*.svc:9090",
      "http://*.svc.cluster.local:9090",
      "https://*.svc.cluster.local:9090",
  };
  return allow;
}

Expected<PrometheusUrl> parsePrometheusUrl(std::string_view url) {
  auto parsed = readUrl(url, false);
  if (!parsed) return std::unexpected(std::move(parsed.error()));
  return std::move(parsed->url);
}

Expected<UrlPattern> UrlPattern::parse(std::string_view pattern) {
  auto parsed = readUrl(pattern, true);
  if (!parsed) {
    return std::unexpected("the pattern " + quoted(pattern) + " " + parsed.error() +
                           " (want SCHEME://HOST[:PORT][/PATH], HOST may be * or *.SUFFIX, "
                           "PORT may be *)");
  }
  UrlPattern out;
  out.text_ = std::string(pattern);
  out.scheme_ = std::move(parsed->url.scheme);
  if (!parsed->any_host) out.host_ = std::move(parsed->url.host);
  out.host_is_suffix_ = parsed->host_is_suffix;
  if (!parsed->any_port) out.port_ = parsed->url.port;
  out.path_ = std::move(parsed->url.path);
  return out;
}

bool UrlPattern::matches(const PrometheusUrl& url) const {
  if (url.scheme != scheme_) return false;
  if (host_is_suffix_) {
    if (url.host.size() <= host_.size() + 1 || !url.host.ends_with(host_) ||
        url.host[url.host.size() - host_.size() - 1] != '.') {
      return false;
    }
  } else if (!host_.empty() && url.host != host_) {
    return false;
  }
  if (port_ && url.port != *port_) return false;
  return path_.empty() || url.path == path_ ||
         (url.path.starts_with(path_) && url.path[path_.size()] == '/');
}

Expected<PrometheusUrlPolicy> PrometheusUrlPolicy::make(const std::vector<std::string>& allow,
                                                        const std::string& allow_regex) {
  PrometheusUrlPolicy policy;
  for (const std::string& entry : allow) {
    auto pattern = UrlPattern::parse(entry);
    if (!pattern) return std::unexpected(std::move(pattern.error()));
    policy.patterns_.push_back(std::move(*pattern));
  }
  if (!allow_regex.empty()) {
    try {
      policy.regex_ = std::make_shared<const std::regex>(allow_regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return std::unexpected("the regex " + quoted(allow_regex) +
                             " does not compile: " + std::string(e.what()));
    }
    policy.regex_text_ = allow_regex;
  }
  return policy;
}

PrometheusUrlPolicy PrometheusUrlPolicy::defaults() {
  static const PrometheusUrlPolicy policy = *make(defaultPrometheusUrlAllow(), "");
  return policy;
}

std::optional<IngestionFailure> PrometheusUrlPolicy::refusal(std::string_view url) const {
  const std::string field = "spec.ingestion.prometheusURL " + quoted(url);
  auto parsed = parsePrometheusUrl(url);
  if (!parsed) {
    return IngestionFailure{std::string(kReasonInvalidPrometheusURL), field + " " + parsed.error()};
  }
  if (std::ranges::any_of(patterns_, [&](const UrlPattern& p) { return p.matches(*parsed); })) {
    return std::nullopt;
  }
  if (regex_ && std::regex_match(url.begin(), url.end(), *regex_)) return std::nullopt;

  std::string allowed;
  for (const UrlPattern& p : patterns_) {
    allowed += allowed.empty() ? "" : ", ";
    allowed += p.text();
  }
  std::string message = field + " is not a Prometheus shardscaler may query: ";
  if (patterns_.empty() && !regex_) {
    message += "--prometheus-url-allow and --prometheus-url-allow-regex allow none";
  } else {
    message += "it matches no --prometheus-url-allow pattern (" +
               (allowed.empty() ? std::string("none") : allowed) + ")";
    if (regex_) message += " nor --prometheus-url-allow-regex " + quoted(regex_text_);
  }
  message += "; the cluster admin sets those flags";
  return IngestionFailure{std::string(kReasonPrometheusURLNotAllowed), std::move(message)};
}

}  // namespace shardscaler::ingestion
