#include "shardscaler/promql_client/prometheus_client.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <utility>

#include "curl_body.h"
#include "curl_handle_pool.h"
#include "shardscaler/promql_client/response_decoder.h"

namespace shardscaler::promql {

namespace {

constexpr size_t kMaxQueryInMessage = 300;
// Of a body that is not an API response: in Error::detail (logs) only, never in the message.
constexpr size_t kMaxBodyInDetail = 300;
// Of the API's own error text, which goes into the message.
constexpr size_t kMaxApiErrorInMessage = 200;

// Unix seconds with millisecond precision, the API's preferred time format.
std::string formatSeconds(int64_t millis) {
  const char* sign = millis < 0 ? "-" : "";
  const uint64_t abs = millis < 0 ? -static_cast<uint64_t>(millis) : static_cast<uint64_t>(millis);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s%" PRIu64 ".%03" PRIu64, sign, abs / 1000, abs % 1000);
  return buf;
}

std::string formatTime(std::chrono::system_clock::time_point t) {
  return formatSeconds(
      std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count());
}

std::string formatDuration(std::chrono::milliseconds d) { return formatSeconds(d.count()); }

std::string quoteForMessage(std::string_view text, size_t max) {
  std::string out = "\"";
  for (char c : text.substr(0, max)) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  out += '"';
  if (text.size() > max) out += "...";
  return out;
}

// The first line of the API's error text, printable ASCII only and bounded: what the server
// says about the query, without whatever else a body may carry.
std::string apiErrorLine(std::string_view text) {
  text = text.substr(0, text.find_first_of("\r\n"));
  std::string out;
  for (char c : text.substr(0, kMaxApiErrorInMessage)) {
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  if (text.size() > kMaxApiErrorInMessage) out += "...";
  return out;
}

// One API call: the endpoint and its form parameters.
struct ApiCall {
  const char* endpoint;  // "/api/v1/query"
  std::string query;
  std::vector<std::pair<const char*, std::string>> params;  // after `query`
};

struct HttpResponse {
  long status = 0;
  std::string body;
  long connections_opened = 0;
};

// What every request of the client sets the same way: user agent, timeouts, protocols, TLS and
// basic auth.
void applyClientOptions(CURL* curl, const ClientOptions& options) {
  curl_easy_setopt(curl, CURLOPT_USERAGENT, options.user_agent.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // timeouts must not use signals in threads
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options.timeout.count()));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  if (options.basic_auth) {
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
    curl_easy_setopt(curl, CURLOPT_USERNAME, options.basic_auth->username.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, options.basic_auth->password.c_str());
  }
  if (!options.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, options.ca_file.c_str());
  if (!options.client_cert_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLCERT, options.client_cert_file.c_str());
    curl_easy_setopt(curl, CURLOPT_SSLKEY, options.client_key_file.c_str());
  }
  if (options.insecure_skip_verify) {
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  }
}

}  // namespace

struct PrometheusClient::State {
  explicit State(ClientOptions o) : options(std::move(o)), pool(options.max_idle_connections) {}

  ClientOptions options;
  CurlHandlePool pool;
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> failures{0};
  std::atomic<uint64_t> connections_opened{0};
  std::atomic<uint64_t> bytes_received{0};

  Result<QueryResult> call(const ApiCall& api_call);
  Result<HttpResponse> perform(CURL* curl, const std::string& url, const std::string& form,
                               bool use_get, const std::string& context);
  Result<std::string> bearerToken() const;
  Result<QueryResult> fail(Error error);
};

Result<std::unique_ptr<PrometheusClient>> PrometheusClient::create(ClientOptions options) {
  std::string& url = options.base_url;
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
    return configError("Prometheus URL " + quoteForMessage(url, 200) +
                       " must start with http:// or https://");
  }
  if (url.find_first_of("?#") != std::string::npos) {
    return configError("Prometheus URL " + quoteForMessage(url, 200) +
                       " must not have a query or a fragment: the client appends the API's path "
                       "and parameters");
  }
  while (!url.empty() && url.back() == '/') url.pop_back();
  const int auth_methods = (options.bearer_token.empty() ? 0 : 1) +
                           (options.bearer_token_file.empty() ? 0 : 1) +
                           (options.basic_auth ? 1 : 0);
  if (auth_methods > 1) {
    return configError("Prometheus client for " + url +
                       ": set at most one of bearer token, bearer token file and basic auth");
  }
  if (options.client_cert_file.empty() != options.client_key_file.empty()) {
    return configError("Prometheus client for " + url +
                       ": a client certificate needs both a certificate and a key file");
  }
  if (options.timeout <= std::chrono::milliseconds::zero()) {
    return configError("Prometheus client for " + url + ": the timeout must be positive");
  }
  if (options.max_response_bytes == 0) {
    return configError("Prometheus client for " + url +
                       ": the largest response it reads must be positive");
  }
  auto state = std::make_unique<State>(std::move(options));
  return std::unique_ptr<PrometheusClient>(new PrometheusClient(std::move(state)));
}

PrometheusClient::PrometheusClient(std::unique_ptr<State> state) : state_(std::move(state)) {}
PrometheusClient::~PrometheusClient() = default;

const ClientOptions& PrometheusClient::options() const { return state_->options; }

ClientStats PrometheusClient::stats() const {
  return ClientStats{.requests = state_->requests.load(),
                     .failures = state_->failures.load(),
                     .connections_opened = state_->connections_opened.load(),
                     .bytes_received = state_->bytes_received.load()};
}

Result<QueryResult> PrometheusClient::query(const InstantQuery& q) {
  ApiCall api_call{.endpoint = "/api/v1/query", .query = q.query, .params = {}};
  if (q.time) api_call.params.emplace_back("time", formatTime(*q.time));
  if (q.timeout) api_call.params.emplace_back("timeout", formatDuration(*q.timeout));
  if (q.limit) api_call.params.emplace_back("limit", std::to_string(*q.limit));
  return state_->call(api_call);
}

Result<std::string> PrometheusClient::State::bearerToken() const {
  if (!options.bearer_token.empty()) return options.bearer_token;
  if (options.bearer_token_file.empty()) return std::string();
  std::ifstream in(options.bearer_token_file);
  std::stringstream content;
  content << in.rdbuf();
  if (!in) {
    return configError("cannot read the bearer token file " + options.bearer_token_file + " for " +
                       options.base_url);
  }
  std::string token = content.str();
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) {
    token.pop_back();
  }
  return token;
}

Result<QueryResult> PrometheusClient::State::call(const ApiCall& api_call) {
  requests.fetch_add(1, std::memory_order_relaxed);
  const std::string url = options.base_url + api_call.endpoint;

  CurlHandlePool::Handle curl = pool.acquire();
  if (!curl) {
    return fail(makeError(ErrorKind::Transport, "libcurl could not allocate a handle"));
  }
  // Form-encode once; POST sends it as the body, GET as the query string.
  std::string form = "query=";
  {
    char* escaped = curl_easy_escape(curl.get(), api_call.query.data(),
                                     static_cast<int>(api_call.query.size()));
    if (escaped == nullptr) {
      return fail(makeError(ErrorKind::Transport, "libcurl could not escape the query"));
    }
    form += escaped;
    curl_free(escaped);
  }
  for (const auto& [name, value] : api_call.params) {
    // Our own values are digits, '.' and '-': nothing to escape.
    form += '&';
    form += name;
    form += '=';
    form += value;
  }

  const std::string context =
      url + ", query " + quoteForMessage(api_call.query, kMaxQueryInMessage);
  bool use_get = options.method == HttpMethod::Get;
  auto response = perform(curl.get(), url, form, use_get, context);
  if (response && !use_get && (response->status == 405 || response->status == 501)) {
    // The server or a proxy in front of it does not take POST here (client_golang does the same).
    use_get = true;
    response = perform(curl.get(), url, form, use_get, context);
  }
  if (!response) return fail(std::move(response.error()));

  const std::string method = use_get ? "GET " : "POST ";
  auto decoded = decodeApiResponse(response->body);
  const bool ok_status = response->status >= 200 && response->status < 300;
  if (!decoded) {
    // Whatever the URL names answered something else than the API: say so, but keep its text
    // out of the message (it may be any service's page or data) and in the detail, for logs.
    Error error = makeError(ok_status ? ErrorKind::Decode : ErrorKind::Http, "",
                            static_cast<int>(response->status));
    const std::string size = std::to_string(response->body.size()) + " bytes";
    if (ok_status) {
      error.message = "the response (" + size + ") from " + method + context +
                      " is not a Prometheus API response";
      error.detail = decoded.error().substr(0, kMaxBodyInDetail);
    } else {
      error.message = method + context + " answered HTTP " + std::to_string(response->status) +
                      " without a Prometheus API error body (" + size + ")";
      error.detail = quoteForMessage(response->body, kMaxBodyInDetail);
    }
    return fail(std::move(error));
  }
  if (!decoded->success) {
    Error error = makeError(errorKindFromApiType(decoded->error_type),
                            apiErrorLine(decoded->error) + " (" + method + context + ")",
                            static_cast<int>(response->status));
    error.error_type = apiErrorLine(decoded->error_type);
    error.warnings = std::move(decoded->warnings);
    return fail(std::move(error));
  }
  if (!ok_status) {
    return fail(makeError(ErrorKind::Http,
                          method + context + " answered HTTP " + std::to_string(response->status) +
                              " with a success body",
                          static_cast<int>(response->status)));
  }
  return std::move(*decoded->result);
}

Result<HttpResponse> PrometheusClient::State::perform(CURL* curl, const std::string& url,
                                                      const std::string& form, bool use_get,
                                                      const std::string& context) {
  auto token = bearerToken();
  if (!token) return std::unexpected(std::move(token.error()));

  CurlSlist headers;
  bool headers_ok = headers.append("Accept: application/json") && headers.append("Expect:");
  if (!token->empty()) headers_ok = headers_ok && headers.append("Authorization: Bearer " + *token);
  for (const auto& [name, value] : options.headers) {
    std::string line = name;
    line += ": ";
    line += value;
    headers_ok = headers_ok && headers.append(line);
  }
  if (!headers_ok) {
    return std::unexpected(
        makeError(ErrorKind::Transport, "libcurl could not allocate headers for " + context));
  }

  HttpResponse response;
  char error_buffer[CURL_ERROR_SIZE] = {};
  const std::string full_url = use_get ? url + "?" + form : url;
  curl_easy_setopt(curl, CURLOPT_URL, full_url.c_str());
  if (use_get) {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, form.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(form.size()));
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.list);
  applyClientOptions(curl, options);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
  BodySink sink{.body = &response.body, .max = options.max_response_bytes};
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &appendBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  // Refuses at once a body whose Content-Length is already too large; the sink stops the rest.
  curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE,
                   static_cast<curl_off_t>(options.max_response_bytes));

  const CURLcode code = curl_easy_perform(curl);
  long new_connections = 0;
  curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &new_connections);
  connections_opened.fetch_add(static_cast<uint64_t>(new_connections), std::memory_order_relaxed);
  // The headers and the buffer live on this stack frame; the handle goes back to the pool.
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);

  const std::string method = use_get ? "GET " : "POST ";
  if (sink.too_large || code == CURLE_FILESIZE_EXCEEDED) {
    return std::unexpected(makeError(
        ErrorKind::ResponseTooLarge,
        "the response from " + method + context + " is larger than " +
            std::to_string(options.max_response_bytes) +
            " bytes; the client stopped reading it (a query that returns fewer series, or a URL "
            "that names a Prometheus, fits)"));
  }
  if (code == CURLE_OPERATION_TIMEDOUT) {
    return std::unexpected(
        makeError(ErrorKind::ClientTimeout,
                  "no complete response within " + std::to_string(options.timeout.count()) +
                      "ms from " + method + context + " (" +
                      (error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code)) + ")"));
  }
  if (code != CURLE_OK) {
    return std::unexpected(
        makeError(ErrorKind::Transport,
                  std::string("cannot get a response from ") + method + context + ": " +
                      (error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code))));
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  bytes_received.fetch_add(response.body.size(), std::memory_order_relaxed);
  return response;
}

Result<QueryResult> PrometheusClient::State::fail(Error error) {
  // Counted, not logged: the error goes back to the caller, which logs it with its own context
  // (ingestion's "ingestion query failed" has the ShardSet, the Prometheus and the query).
  failures.fetch_add(1, std::memory_order_relaxed);
  return std::unexpected(std::move(error));
}

}  // namespace shardscaler::promql
