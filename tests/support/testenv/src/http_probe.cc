#include "http_probe.h"

#include <curl/curl.h>

#include <memory>
#include <mutex>

namespace shardscaler::testenv::control_plane_detail {
namespace {

size_t appendBody(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

}  // namespace

HttpResponse httpGet(const std::string& url, const HttpProbe& probe) {
  static std::once_flag global_init;
  std::call_once(global_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  HttpResponse response;
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) {
    response.error = "curl_easy_init failed";
    return response;
  }
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(nullptr, curl_slist_free_all);
  if (!probe.bearer_token.empty()) {
    headers.reset(
        curl_slist_append(nullptr, ("Authorization: Bearer " + probe.bearer_token).c_str()));
  }
  char error[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_NOPROXY, "*");
  curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(probe.timeout.count()));
  curl_easy_setopt(curl.get(), CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, appendBody);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &response.body);
  if (headers) curl_easy_setopt(curl.get(), CURLOPT_HTTPHEADER, headers.get());
  if (!probe.ca_file.empty()) curl_easy_setopt(curl.get(), CURLOPT_CAINFO, probe.ca_file.c_str());
  CURLcode rc = curl_easy_perform(curl.get());
  if (rc != CURLE_OK) {
    response.error = error[0] ? error : curl_easy_strerror(rc);
    return response;
  }
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

}  // namespace shardscaler::testenv::control_plane_detail
