#include "shardscaler/test_kit/http_get.h"

#include <curl/curl.h>

#include <memory>
#include <mutex>

namespace shardscaler::test_kit {
namespace {

struct CurlDeleter {
  void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
};
using CurlHandle = std::unique_ptr<CURL, CurlDeleter>;

struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

// curl_global_init is not thread-safe on every libcurl build: once, before the first handle.
CurlHandle newHandle() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  return CurlHandle(curl_easy_init());
}

size_t appendBody(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

}  // namespace

HttpGetResult httpGet(const std::string& url, const HttpGetOptions& options) {
  HttpGetResult result;
  CurlHandle curl = newHandle();
  if (!curl) {
    result.error = "curl_easy_init failed";
    return result;
  }
  std::unique_ptr<curl_slist, SlistDeleter> headers;
  if (!options.bearer_token.empty()) {
    headers.reset(
        curl_slist_append(nullptr, ("Authorization: Bearer " + options.bearer_token).c_str()));
  }
  char error[CURL_ERROR_SIZE] = {};
  CURL* h = curl.get();
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_PROXY, "");  // loopback servers: never via $http_proxy
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(options.timeout.count()));
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &appendBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &result.body);
  if (headers) curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  if (options.ca_file.empty()) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  } else {
    curl_easy_setopt(h, CURLOPT_CAINFO, options.ca_file.c_str());
  }
  if (options.basic_auth) {
    curl_easy_setopt(h, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
    curl_easy_setopt(h, CURLOPT_USERNAME, options.basic_auth->first.c_str());
    curl_easy_setopt(h, CURLOPT_PASSWORD, options.basic_auth->second.c_str());
  }
  const CURLcode code = curl_easy_perform(h);
  if (code != CURLE_OK) {
    result.error = error[0] != '\0' ? error : curl_easy_strerror(code);
    return result;
  }
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &result.status);
  return result;
}

std::string urlEncode(std::string_view value) {
  CurlHandle curl = newHandle();
  char* escaped =
      curl ? curl_easy_escape(curl.get(), value.data(), static_cast<int>(value.size())) : nullptr;
  if (escaped == nullptr) return std::string(value);
  std::string out(escaped);
  curl_free(escaped);
  return out;
}

}  // namespace shardscaler::test_kit
