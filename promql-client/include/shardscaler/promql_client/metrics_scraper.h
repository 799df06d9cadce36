// Reads one Prometheus's own /metrics (the text exposition) over HTTP or HTTPS, at an IP address:
// one GET per call, bounded in time and size, connections pooled. It never follows a redirect,
// never sends a credential but the client certificate it was given, and never knows what a pod is.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "shardscaler/promql_client/error.h"
#include "shardscaler/promql_client/exposition.h"

namespace shardscaler::promql {

struct ScraperOptions {
  // A whole request (connect, send, the full body) and the connection alone.
  std::chrono::milliseconds timeout{std::chrono::seconds(5)};
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(2)};
  // The most bytes of a body read; past it the scrape fails with ResponseTooLarge. A Prometheus's
  // own /metrics is about 60 KB, and grows with its scrape pools and remote-write queues.
  size_t max_response_bytes = size_t{4} * 1024 * 1024;
  size_t max_idle_connections = 4;
  std::string user_agent = "shardscaler-scraper";
};

// HTTPS, as the target's web server declares it.
struct ScrapeTls {
  std::string ca_file{};  // the CA the server's certificate must chain to; the system store if ""
  // Presented when the server asks for one (clientAuthType); both or neither.
  std::string client_cert_file{};
  std::string client_key_file{};
  // The name the certificate must carry (resolved to the address, never looked up); the address
  // itself when "".
  std::string server_name{};
};

struct ScrapeTarget {
  std::string address{};  // an IPv4 or IPv6 address, nothing else
  uint16_t port = 0;
  std::string path = "/metrics";
  std::optional<ScrapeTls> tls{};  // plain HTTP when unset
};

// Thread-safety: scrape() may run on several threads at once.
class MetricsScraper {
 public:
  // Fails (Config) on a non-positive timeout or size.
  static Result<std::unique_ptr<MetricsScraper>> create(ScraperOptions options = {});
  ~MetricsScraper();
  MetricsScraper(const MetricsScraper&) = delete;
  MetricsScraper& operator=(const MetricsScraper&) = delete;

  // The samples `keep` accepts from the body of GET <target>, which must answer 200 with the text
  // format (text/plain). Errors: Config for a target that is not an IP address, a port or a path
  // ("/..."), or half a client certificate; Transport (TLS failures included), ClientTimeout,
  // ResponseTooLarge, Http for another status, Decode for a body that is not the format (the
  // parser's line and reason in the message, never the body's text).
  Result<std::vector<ExposedSample>> scrape(const ScrapeTarget& target, const KeepSample& keep);

  const ScraperOptions& options() const;

 private:
  struct State;
  explicit MetricsScraper(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// "http://10.0.0.1:9090/metrics", "https://[fd00::1]:9090/metrics": for messages and logs.
std::string describeTarget(const ScrapeTarget& target);

}  // namespace shardscaler::promql
