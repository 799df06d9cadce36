// libcurl plumbing shared by RestClient's verbs and its watch: the pool of easy handles
// (each keeps its keep-alive connection), the options every request carries, and errors.
#pragma once

#include <curl/curl.h>

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/k8s_client/error.h"
#include "shardscaler/k8s_client/kube_config.h"

namespace shardscaler::k8s::detail {

struct CurlEasyDeleter {
  void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
};
using CurlHandle = std::unique_ptr<CURL, CurlEasyDeleter>;

struct CurlSlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using CurlHeaders = std::unique_ptr<curl_slist, CurlSlistDeleter>;

// curl_global_init, once per process, before the first handle.
void ensureCurlInitialized();

// Idle easy handles. A released handle keeps its open connection, so the next request to
// the same server skips TCP and TLS set-up.
class CurlHandlePool {
 public:
  explicit CurlHandlePool(size_t max_idle) : max_idle_(max_idle) {}
  // A handle with default options (curl_easy_reset keeps live connections).
  CurlHandle acquire();
  void release(CurlHandle handle);

 private:
  const size_t max_idle_;
  std::mutex mutex_;
  std::vector<CurlHandle> idle_;
};

// Everything a transfer needs that must outlive curl_easy_perform.
struct TransferState {
  CurlHeaders headers;
  char error_buffer[CURL_ERROR_SIZE] = {};
};

// URL, TLS, authentication, user agent, connect timeout, keep-alive probes, headers (Accept:
// application/json unless extra_headers has an Accept). The caller adds method, body, write
// callback and the overall timeout.
void applyCommonOptions(CURL* curl, const KubeConfig& config, const std::string& url,
                        const std::string& bearer_token, std::vector<std::string> extra_headers,
                        TransferState& state);

// A failed transfer as an Error naming the request and the server.
Error transportError(CURLcode code, const TransferState& state, std::string_view request,
                     const KubeConfig& config);

}  // namespace shardscaler::k8s::detail
