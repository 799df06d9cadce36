#include "shardscaler/test_kit/http_client.h"

#include <openssl/ssl.h>

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "shardscaler/test_kit/http_get.h"

namespace shardscaler::test_kit {
namespace {

struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

// curl_global_init is not thread-safe on every libcurl build: once, before the first handle.
CURL* newHandle() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  return curl_easy_init();
}

struct Transfer {
  CURL* curl;
  ClientReply* reply;
};

// The TLS session can be reached only while the transfer runs, so the version is read from the
// header callback, which every response reaches.
size_t onHeader(char* /*data*/, size_t size, size_t count, void* context) {
  auto* transfer = static_cast<Transfer*>(context);
  if (!transfer->reply->tls_version.empty()) return size * count;
  curl_tlssessioninfo* session = nullptr;
  if (curl_easy_getinfo(transfer->curl, CURLINFO_TLS_SSL_PTR, &session) == CURLE_OK &&
      session != nullptr && session->backend == CURLSSLBACKEND_OPENSSL &&
      session->internals != nullptr) {
    auto* ssl = static_cast<SSL*>(session->internals);
    transfer->reply->tls_version = SSL_get_version(ssl);
    transfer->reply->tls_session_reused = SSL_session_reused(ssl) == 1;
  }
  return size * count;
}

size_t onBody(char* data, size_t size, size_t count, void* context) {
  static_cast<Transfer*>(context)->reply->body.append(data, size * count);
  return size * count;
}

curl_blob blobOf(const std::string& text) {
  return curl_blob{const_cast<char*>(text.data()), text.size(), CURL_BLOB_COPY};
}

std::string serverCertificatePem(CURL* curl) {
  curl_certinfo* info = nullptr;
  if (curl_easy_getinfo(curl, CURLINFO_CERTINFO, &info) != CURLE_OK || info == nullptr ||
      info->num_of_certs < 1) {
    return {};
  }
  constexpr std::string_view kPrefix = "Cert:";
  for (curl_slist* item = info->certinfo[0]; item != nullptr; item = item->next) {
    const std::string_view line = item->data;
    if (line.starts_with(kPrefix)) return std::string(line.substr(kPrefix.size()));
  }
  return {};
}

}  // namespace

void HttpClient::Deleter::operator()(CURL* curl) const { curl_easy_cleanup(curl); }

HttpClient::HttpClient() : curl_(newHandle()) {}

HttpClient::~HttpClient() = default;

ClientReply HttpClient::perform(const ClientRequest& request) {
  ClientReply reply;
  if (!curl_) {
    reply.code = CURLE_FAILED_INIT;
    reply.error = "curl_easy_init failed";
    return reply;
  }
  CURL* h = curl_.get();
  curl_easy_reset(h);  // keeps the open connection
  char error[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_PROXY, "");  // loopback servers: never via $http_proxy
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  if (!request.body.empty() || request.method == "POST") {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.c_str());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  }
  std::unique_ptr<curl_slist, SlistDeleter> headers;
  const auto addHeader = [&](const std::string& header) {
    headers.reset(curl_slist_append(headers.release(), header.c_str()));
  };
  for (const auto& header : request.headers) addHeader(header);
  if (!request.bearer_token.empty()) addHeader("Authorization: Bearer " + request.bearer_token);
  if (headers) curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  if (request.basic_auth) {
    curl_easy_setopt(h, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
    curl_easy_setopt(h, CURLOPT_USERNAME, request.basic_auth->first.c_str());
    curl_easy_setopt(h, CURLOPT_PASSWORD, request.basic_auth->second.c_str());
  }
  if (!request.ca_pem.empty()) {
    curl_blob ca = blobOf(request.ca_pem);
    curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &ca);
    curl_easy_setopt(h, CURLOPT_CAPATH, nullptr);
  } else if (!request.ca_file.empty()) {
    curl_easy_setopt(h, CURLOPT_CAINFO, request.ca_file.c_str());
  } else {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!request.client_certificate_pem.empty()) {
    curl_blob certificate = blobOf(request.client_certificate_pem);
    curl_blob key = blobOf(request.client_key_pem);
    curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &certificate);
    curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &key);
    curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
  }
  curl_easy_setopt(h, CURLOPT_SSLVERSION, request.ssl_version);
  curl_easy_setopt(h, CURLOPT_CERTINFO, 1L);
  Transfer transfer{h, &reply};
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &onHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &onBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &transfer);
  reply.code = curl_easy_perform(h);
  if (reply.code != CURLE_OK) {
    reply.error = error[0] != '\0' ? error : curl_easy_strerror(reply.code);
    return reply;
  }
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &reply.status);
  reply.server_certificate_pem = serverCertificatePem(h);
  return reply;
}

ClientReply requestOnce(const ClientRequest& request) { return HttpClient().perform(request); }

HttpGetResult httpGet(const std::string& url, const HttpGetOptions& options) {
  ClientReply reply = requestOnce({.url = url,
                                   .timeout = options.timeout,
                                   .ca_file = options.ca_file,
                                   .bearer_token = options.bearer_token,
                                   .basic_auth = options.basic_auth});
  return {.status = reply.status, .body = std::move(reply.body), .error = std::move(reply.error)};
}

std::string urlEncode(std::string_view value) {
  const std::unique_ptr<CURL, void (*)(CURL*)> curl(newHandle(), &curl_easy_cleanup);
  char* escaped =
      curl ? curl_easy_escape(curl.get(), value.data(), static_cast<int>(value.size())) : nullptr;
  if (escaped == nullptr) return std::string(value);
  std::string out(escaped);
  curl_free(escaped);
  return out;
}

}  // namespace shardscaler::test_kit
