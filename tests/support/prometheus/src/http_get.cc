#include "http_get.h"

#include <curl/curl.h>

#include <memory>
#include <mutex>

namespace shardscaler::testenv::prometheus_detail {

namespace {
size_t appendBody(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

struct CurlDeleter {
  void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
};

std::unique_ptr<CURL, CurlDeleter> newCurl() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  return std::unique_ptr<CURL, CurlDeleter>(curl_easy_init());
}
}  // namespace

HttpGetResult httpGet(const std::string& url, std::chrono::milliseconds timeout,
                      const std::optional<std::pair<std::string, std::string>>& basic_auth) {
  HttpGetResult result;
  auto curl = newCurl();
  if (!curl) {
    result.error = "curl_easy_init failed";
    return result;
  }
  char error_buffer[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, &appendBody);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &result.body);
  curl_easy_setopt(curl.get(), CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(curl.get(), CURLOPT_SSL_VERIFYPEER, 0L);
  curl_easy_setopt(curl.get(), CURLOPT_SSL_VERIFYHOST, 0L);
  curl_easy_setopt(curl.get(), CURLOPT_PROXY, "");  // loopback servers: never via a proxy
  if (basic_auth) {
    curl_easy_setopt(curl.get(), CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
    curl_easy_setopt(curl.get(), CURLOPT_USERNAME, basic_auth->first.c_str());
    curl_easy_setopt(curl.get(), CURLOPT_PASSWORD, basic_auth->second.c_str());
  }
  const CURLcode code = curl_easy_perform(curl.get());
  if (code != CURLE_OK) {
    result.error = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code);
    return result;
  }
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &result.status);
  return result;
}

std::string urlEncode(const std::string& value) {
  auto curl = newCurl();
  char* escaped =
      curl ? curl_easy_escape(curl.get(), value.data(), static_cast<int>(value.size())) : nullptr;
  if (escaped == nullptr) return value;
  std::string out(escaped);
  curl_free(escaped);
  return out;
}

}  // namespace shardscaler::testenv::prometheus_detail
