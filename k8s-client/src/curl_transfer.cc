#include "curl_transfer.h"

#include <algorithm>
#include <mutex>
#include <utility>

namespace shardscaler::k8s::detail {

void ensureCurlInitialized() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

CurlHandle CurlHandlePool::acquire() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      CurlHandle handle = std::move(idle_.back());
      idle_.pop_back();
      curl_easy_reset(handle.get());
      return handle;
    }
  }
  ensureCurlInitialized();
  return CurlHandle(curl_easy_init());
}

void CurlHandlePool::release(CurlHandle handle) {
  if (!handle) return;
  std::lock_guard lock(mutex_);
  if (idle_.size() < max_idle_) idle_.push_back(std::move(handle));
}

namespace {

void setBlob(CURL* curl, CURLoption option, const std::string& data) {
  curl_blob blob{};
  blob.data = const_cast<char*>(data.data());  // copied by libcurl (CURL_BLOB_COPY)
  blob.len = data.size();
  blob.flags = CURL_BLOB_COPY;
  curl_easy_setopt(curl, option, &blob);
}

}  // namespace

void applyCommonOptions(CURL* curl, const KubeConfig& config, const std::string& url,
                        const std::string& bearer_token, std::vector<std::string> extra_headers,
                        TransferState& state) {
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, state.error_buffer);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
  curl_easy_setopt(curl, CURLOPT_USERAGENT, config.user_agent.c_str());
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(config.connect_timeout.count()));
  // Probes find a peer that vanished without a FIN (node died, NAT dropped the flow).
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPIDLE, 30L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPINTVL, 10L);
  // Like Go's ProxyFromEnvironment: a proxy from the environment never applies to loopback.
  curl_easy_setopt(curl, CURLOPT_NOPROXY, "localhost,127.0.0.1,::1");

  if (config.insecure_skip_tls_verify) {
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  } else if (!config.ca_data.empty()) {
    setBlob(curl, CURLOPT_CAINFO_BLOB, config.ca_data);
  } else if (!config.ca_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_CAINFO, config.ca_file.c_str());
  }
  if (!config.client_cert_data.empty()) {
    setBlob(curl, CURLOPT_SSLCERT_BLOB, config.client_cert_data);
    curl_easy_setopt(curl, CURLOPT_SSLCERTTYPE, "PEM");
  } else if (!config.client_cert_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLCERT, config.client_cert_file.c_str());
  }
  if (!config.client_key_data.empty()) {
    setBlob(curl, CURLOPT_SSLKEY_BLOB, config.client_key_data);
    curl_easy_setopt(curl, CURLOPT_SSLKEYTYPE, "PEM");
  } else if (!config.client_key_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLKEY, config.client_key_file.c_str());
  }

  if (!bearer_token.empty()) {
    extra_headers.push_back("Authorization: Bearer " + bearer_token);
  } else if (!config.username.empty()) {
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
    curl_easy_setopt(curl, CURLOPT_USERNAME, config.username.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, config.password.c_str());
  }
  if (std::ranges::none_of(extra_headers,
                           [](const std::string& h) { return h.starts_with("Accept:"); })) {
    extra_headers.emplace_back("Accept: application/json");
  }
  extra_headers.emplace_back("Expect:");  // no 100-continue round trip for large bodies
  curl_slist* list = nullptr;
  for (const auto& header : extra_headers) list = curl_slist_append(list, header.c_str());
  state.headers.reset(list);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
}

Error transportError(CURLcode code, const TransferState& state, std::string_view request,
                     const KubeConfig& config) {
  std::string detail = state.error_buffer[0] != '\0' ? std::string(state.error_buffer)
                                                     : std::string(curl_easy_strerror(code));
  Error error;
  error.kind = ErrorKind::Transport;
  std::string what;
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      what = "cannot reach the API server " + config.server;
      break;
    case CURLE_OPERATION_TIMEDOUT:
      error.kind = ErrorKind::Timeout;
      what = "no complete answer from the API server " + config.server + " in time";
      break;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_CRL_BADFILE:
      what = "TLS with the API server " + config.server + " failed";
      break;
    case CURLE_ABORTED_BY_CALLBACK:
      error.kind = ErrorKind::Cancelled;
      what = "cancelled";
      break;
    default:
      what = "the connection to the API server " + config.server + " failed";
      break;
  }
  error.message = std::string(request) + ": " + what + " (" + detail + ")";
  return error;
}

}  // namespace shardscaler::k8s::detail
