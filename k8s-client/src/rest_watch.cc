// RestClient::watch: one streamed GET on its own connection, decoded as bytes arrive.
#include <algorithm>
#include <exception>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "rest_client_impl.h"
#include "shardscaler/k8s_client/api_status.h"
#include "shardscaler/k8s_client/watch_stream.h"
#include "shardscaler/k8s_meta/url_encoding.h"

namespace shardscaler::k8s {
namespace {

constexpr size_t kMaxErrorBody = size_t{64} * 1024;

// Shared between curl_easy_perform's callbacks and the code after it.
struct WatchTransfer {
  explicit WatchTransfer(std::shared_ptr<const FieldMask> fields) : decoder(std::move(fields)) {}

  CURL* curl = nullptr;
  const WatchHandler* handler = nullptr;
  const std::atomic<bool>* stop = nullptr;
  std::string request;
  WatchStreamDecoder decoder;
  long http_status = 0;
  std::string error_body;  // a non-200 answer, decoded after the transfer
  std::optional<Error> error;
  bool handler_stopped = false;
  bool cancelled = false;
  std::exception_ptr exception;

  bool stopRequested() const { return stop != nullptr && stop->load(); }
};

size_t onWatchBytes(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<WatchTransfer*>(user);
  size_t bytes = size * count;
  if (t->http_status == 0) curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &t->http_status);
  if (t->http_status != 200) {
    if (t->error_body.size() < kMaxErrorBody) t->error_body.append(data, bytes);
    return bytes;
  }
  if (t->stopRequested()) {
    t->cancelled = true;
    return 0;
  }
  // Exceptions must not cross libcurl's C frames: keep one and rethrow after the transfer.
  try {
    auto fed = t->decoder.feed(std::string_view(data, bytes), [t](WatchEvent&& event) {
      if (event.type == WatchEventType::Error) {
        t->error = errorFromStatus(event.object, t->request);
        return false;
      }
      if (!(*t->handler)(std::move(event))) {
        t->handler_stopped = true;
        return false;
      }
      if (t->stopRequested()) {
        t->cancelled = true;
        return false;
      }
      return true;
    });
    if (!fed) {
      t->error = std::move(fed.error());
      t->error->message = t->request + ": " + t->error->message;
      return 0;
    }
    return *fed ? bytes : 0;
  } catch (...) {
    t->exception = std::current_exception();
    return 0;
  }
}

// libcurl calls this at least about once a second even when no byte arrives, which bounds
// how long a stop request waits.
int onWatchProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<WatchTransfer*>(user);
  if (t->stopRequested()) {
    t->cancelled = true;
    return 1;
  }
  return 0;
}

}  // namespace

Result<void> RestClient::watch(const Resource& r, const std::string& ns, const WatchOptions& opts,
                               const WatchHandler& handler, const std::atomic<bool>* stop) {
  std::string path = r.collectionPath(ns);
  detail::appendQuery(path, "watch", "true");
  detail::appendQuery(path, "resourceVersion", opts.resource_version);
  detail::appendQuery(path, "labelSelector", opts.label_selector);
  detail::appendQuery(path, "fieldSelector", opts.field_selector);
  if (opts.allow_bookmarks) detail::appendQuery(path, "allowWatchBookmarks", "true");
  if (opts.timeout_seconds > 0) {
    detail::appendQuery(path, "timeoutSeconds", std::to_string(opts.timeout_seconds));
  }
  std::string resource = r.describe();
  WatchTransfer transfer(opts.fields);
  transfer.handler = &handler;
  transfer.stop = stop;
  transfer.request = Impl::describeRequest("watch", resource, "GET", path);
  if (transfer.stopRequested()) return {};

  auto started = impl_->options.clock->monotonicNow();
  auto bearer = impl_->token.current();
  if (!bearer) {
    return makeError(ErrorKind::Config, transfer.request + ": " + bearer.error().message);
  }
  // A watch holds its connection for minutes: its own handle, never one from the pool.
  detail::ensureCurlInitialized();
  detail::CurlHandle handle(curl_easy_init());
  if (!handle) {
    return makeError(ErrorKind::Transport,
                     transfer.request + ": libcurl could not create a handle");
  }
  CURL* curl = handle.get();
  transfer.curl = curl;
  detail::TransferState state;
  std::vector<std::string> headers;
  if (opts.metadata_only) headers.push_back("Accept: " + Impl::metadataAccept(/*list=*/false));
  detail::applyCommonOptions(curl, impl_->config, impl_->config.server + path, *bearer,
                             std::move(headers), state);
  curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &onWatchBytes);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, &onWatchProgress);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &transfer);
  // No overall timeout: the server ends the stream after timeoutSeconds. A stream that stays
  // silent longer than that is a dead connection.
  long idle_seconds = opts.idle_timeout_seconds > 0 ? opts.idle_timeout_seconds
                                                    : std::max(opts.timeout_seconds, 0) + 30;
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, idle_seconds);

  CURLcode code = curl_easy_perform(curl);
  long http_status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &http_status);
  impl_->observe("watch", resource, http_status, started);
  if (transfer.exception) std::rethrow_exception(transfer.exception);
  if (transfer.error) return std::unexpected(std::move(*transfer.error));
  if (transfer.handler_stopped || transfer.cancelled || transfer.stopRequested()) return {};
  if (code == CURLE_OPERATION_TIMEDOUT) {
    return makeError(ErrorKind::Timeout,
                     transfer.request + ": no data from " + impl_->config.server + " for " +
                         std::to_string(idle_seconds) + " s; the connection is considered dead");
  }
  if (code != CURLE_OK) {
    return std::unexpected(detail::transportError(code, state, transfer.request, impl_->config));
  }
  if (http_status != 200) {
    if (http_status == 401) impl_->token.invalidate();
    std::optional<std::chrono::seconds> retry_after;
    curl_header* header = nullptr;
    if (curl_easy_header(curl, "Retry-After", 0, CURLH_HEADER, -1, &header) == CURLHE_OK) {
      retry_after = parseRetryAfter(header->value);
    }
    return std::unexpected(errorFromResponse(static_cast<int>(http_status), transfer.error_body,
                                             retry_after, transfer.request));
  }
  if (transfer.decoder.midEvent()) {
    return makeError(ErrorKind::Transport,
                     transfer.request + ": the stream ended in the middle of an event");
  }
  return {};
}

}  // namespace shardscaler::k8s
