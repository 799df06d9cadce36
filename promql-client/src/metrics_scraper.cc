#include "shardscaler/promql_client/metrics_scraper.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <utility>

#include "curl_body.h"
#include "curl_handle_pool.h"

namespace shardscaler::promql {
namespace {

bool isIpv6(const std::string& address) {
  in6_addr v6{};
  return inet_pton(AF_INET6, address.c_str(), &v6) == 1;
}

bool isIpAddress(const std::string& address) {
  in_addr v4{};
  return inet_pton(AF_INET, address.c_str(), &v4) == 1 || isIpv6(address);
}

std::string hostPart(const std::string& host) { return isIpv6(host) ? "[" + host + "]" : host; }

// A path of printable ASCII without a query or fragment.
bool plainPath(const std::string& path) {
  return !path.empty() && path.front() == '/' && std::ranges::all_of(path, [](char c) {
    return c > 0x20 && c < 0x7f && c != '?' && c != '#' && c != '%';
  });
}

// Collects the Content-Type header of the final response.
size_t readHeader(char* data, size_t size, size_t count, void* user) {
  auto* content_type = static_cast<std::string*>(user);
  const std::string_view line(data, size * count);
  constexpr std::string_view kName = "content-type:";
  if (line.size() >= kName.size() &&
      std::ranges::equal(line.substr(0, kName.size()), kName, [](char a, char b) {
        return std::tolower(static_cast<unsigned char>(a)) == b;
      })) {
    std::string_view value = line.substr(kName.size());
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
      value.remove_prefix(1);
    }
    while (!value.empty() &&
           (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) {
      value.remove_suffix(1);
    }
    content_type->assign(value);
  }
  return size * count;
}

}  // namespace

std::string describeTarget(const ScrapeTarget& target) {
  return std::string(target.tls ? "https://" : "http://") + hostPart(target.address) + ":" +
         std::to_string(target.port) + target.path;
}

struct MetricsScraper::State {
  explicit State(ScraperOptions o) : options(std::move(o)), pool(options.max_idle_connections) {}
  ScraperOptions options;
  CurlHandlePool pool;
};

Result<std::unique_ptr<MetricsScraper>> MetricsScraper::create(ScraperOptions options) {
  if (options.timeout <= std::chrono::milliseconds::zero() ||
      options.connect_timeout <= std::chrono::milliseconds::zero()) {
    return configError("the metrics scraper's timeouts must be positive");
  }
  if (options.max_response_bytes == 0) {
    return configError("the largest body the metrics scraper reads must be positive");
  }
  return std::unique_ptr<MetricsScraper>(
      new MetricsScraper(std::make_unique<State>(std::move(options))));
}

MetricsScraper::MetricsScraper(std::unique_ptr<State> state) : state_(std::move(state)) {}
MetricsScraper::~MetricsScraper() = default;

const ScraperOptions& MetricsScraper::options() const { return state_->options; }

Result<std::vector<ExposedSample>> MetricsScraper::scrape(const ScrapeTarget& target,
                                                          const KeepSample& keep) {
  const ScraperOptions& options = state_->options;
  const std::string where = describeTarget(target);
  if (!isIpAddress(target.address)) {
    return configError("cannot scrape " + where + ": \"" + target.address.substr(0, 64) +
                       "\" is not an IP address");
  }
  if (target.port == 0) return configError("cannot scrape " + where + ": no port");
  if (!plainPath(target.path)) {
    return configError("cannot scrape " + where + ": the path must be a plain /path");
  }
  if (target.tls && target.tls->client_cert_file.empty() != target.tls->client_key_file.empty()) {
    return configError("cannot scrape " + where +
                       ": a client certificate needs both a certificate and a key file");
  }
  CurlHandlePool::Handle curl = state_->pool.acquire();
  if (!curl) return std::unexpected(makeError(ErrorKind::Transport, "libcurl has no handle"));

  // Over TLS the URL names the server as its certificate does, pinned to the address, so that
  // the name is verified and never looked up.
  const bool named = target.tls && !target.tls->server_name.empty();
  const std::string host = named ? target.tls->server_name : hostPart(target.address);
  const std::string url = std::string(target.tls ? "https://" : "http://") + host + ":" +
                          std::to_string(target.port) + target.path;
  CurlSlist resolve;
  CurlSlist headers;
  if (!headers.append("Accept: text/plain;version=0.0.4") ||
      (named && !resolve.append(target.tls->server_name + ":" + std::to_string(target.port) + ":" +
                                hostPart(target.address)))) {
    return std::unexpected(makeError(ErrorKind::Transport, "libcurl could not allocate a list"));
  }
  std::string body;
  std::string content_type;
  char error_buffer[CURL_ERROR_SIZE] = {};
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.list);
  if (named) curl_easy_setopt(c, CURLOPT_RESOLVE, resolve.list);
  curl_easy_setopt(c, CURLOPT_USERAGENT, options.user_agent.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(options.timeout.count()));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options.connect_timeout.count()));
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");  // gzip when the server offers it
  if (target.tls) {
    if (!target.tls->ca_file.empty()) {
      curl_easy_setopt(c, CURLOPT_CAINFO, target.tls->ca_file.c_str());
    }
    if (!target.tls->client_cert_file.empty()) {
      curl_easy_setopt(c, CURLOPT_SSLCERT, target.tls->client_cert_file.c_str());
      curl_easy_setopt(c, CURLOPT_SSLKEY, target.tls->client_key_file.c_str());
    }
  }
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error_buffer);
  BodySink sink{.body = &body, .max = options.max_response_bytes};
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &appendBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &readHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &content_type);
  curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE,
                   static_cast<curl_off_t>(options.max_response_bytes));
  const CURLcode code = curl_easy_perform(c);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  // These live on this stack frame; the handle goes back to the pool.
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(c, CURLOPT_RESOLVE, nullptr);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, nullptr);

  const std::string curl_error = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code);
  if (sink.too_large || code == CURLE_FILESIZE_EXCEEDED) {
    return std::unexpected(
        makeError(ErrorKind::ResponseTooLarge, where + " answered more than " +
                                                   std::to_string(options.max_response_bytes) +
                                                   " bytes; the scraper stopped reading"));
  }
  if (code == CURLE_OPERATION_TIMEDOUT) {
    return std::unexpected(
        makeError(ErrorKind::ClientTimeout, "no complete answer from " + where + " within " +
                                                std::to_string(options.timeout.count()) + "ms (" +
                                                curl_error + ")"));
  }
  if (code != CURLE_OK) {
    return std::unexpected(
        makeError(ErrorKind::Transport, "cannot scrape " + where + ": " + curl_error));
  }
  if (status != 200) {
    return std::unexpected(makeError(ErrorKind::Http,
                                     where + " answered HTTP " + std::to_string(status) + " (" +
                                         std::to_string(body.size()) + " bytes)",
                                     static_cast<int>(status)));
  }
  if (!content_type.starts_with("text/plain")) {
    return std::unexpected(makeError(ErrorKind::Decode,
                                     where + " answered Content-Type \"" +
                                         content_type.substr(0, 80) +
                                         "\", not the text format (text/plain)",
                                     200));
  }
  auto samples = parseExposition(body, keep);
  if (!samples) {
    return std::unexpected(
        makeError(ErrorKind::Decode,
                  where + " answered a body that is not the text format: " + samples.error(), 200));
  }
  return std::move(*samples);
}

}  // namespace shardscaler::promql
