// Which Prometheus URLs shardscaler queries for a ShardSet. spec.ingestion.prometheusURL is written
// by anyone who may create a ShardSet, and shardscaler sends requests from its own place in the
// network, so the cluster admin names the servers it may reach (--prometheus-url-allow and
// --prometheus-url-allow-regex). Pure. Must never admit a URL that the allow-list does not match,
// nor one that carries credentials, a query or a fragment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/base/expected.h"
#include "shardscaler/ingestion/ingestion_result.h"

namespace shardscaler::ingestion {

// Longer URLs are refused before anything else reads them (the regex among them).
inline constexpr std::size_t kMaxPrometheusUrlLength = 2048;

// --prometheus-url-allow's default: the cluster's Services on Prometheus's port, 9090, over HTTP
// or HTTPS (prometheus-operated.<ns>.svc:9090 is the operator's own Service).
const std::vector<std::string>& defaultPrometheusUrlAllow();

// A URL as the policy reads it: http(s), no credentials, no query, no fragment, no
// percent-encoding, no "." or ".." segment, printable ASCII.
struct PrometheusUrl {
  std::string scheme;  // "http" or "https"
  std::string host;    // lower case; an IPv6 address without its brackets
  uint16_t port = 0;   // the scheme's default when none is written
  std::string path;    // "" or "/a/b", without a trailing '/'
};
// The error says what is wrong, e.g. `must not have a query ("?..."): ...`.
Expected<PrometheusUrl> parsePrometheusUrl(std::string_view url);

// One entry of --prometheus-url-allow: SCHEME://HOST[:PORT][/PATH]. HOST is a DNS name or an
// address, "*" (any host) or "*.SUFFIX" (a name of one or more labels followed by .SUFFIX); PORT a
// number, "*" (any port) or absent (the scheme's default); PATH a prefix of whole segments.
class UrlPattern {
 public:
  static Expected<UrlPattern> parse(std::string_view pattern);
  bool matches(const PrometheusUrl& url) const;
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::string scheme_;
  std::string host_;  // "" = any host
  bool host_is_suffix_ = false;
  std::optional<uint16_t> port_;  // nullopt = any port
  std::string path_;
};

class PrometheusUrlPolicy {
 public:
  // A URL is allowed when it matches one of `allow` or the whole of `allow_regex` (ECMAScript;
  // "" = none). The error names the entry that is not a pattern, or the regex that does not
  // compile.
  static Expected<PrometheusUrlPolicy> make(const std::vector<std::string>& allow,
                                            const std::string& allow_regex);
  // make(defaultPrometheusUrlAllow(), "").
  static PrometheusUrlPolicy defaults();

  // nullopt when shardscaler may query `url`. Otherwise why not, as the IngestionAvailable
  // condition says it: InvalidPrometheusURL for its shape, PrometheusURLNotAllowed (naming the
  // flags) when the allow-list does not match it.
  std::optional<IngestionFailure> refusal(std::string_view url) const;

 private:
  std::vector<UrlPattern> patterns_;
  std::string regex_text_;
  std::shared_ptr<const std::regex> regex_;  // null when none
};

}  // namespace shardscaler::ingestion
