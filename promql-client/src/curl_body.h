// What the client's libcurl transfers share: a body sink that stops at a size, and a header list
// that frees itself. Private to promql-client.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

#include <curl/curl.h>

namespace shardscaler::promql {

// Where libcurl writes a response body: it stops taking bytes past `max`, which makes libcurl
// abort the transfer (CURLE_WRITE_ERROR).
struct BodySink {
  std::string* body;
  size_t max;
  bool too_large = false;
};

inline size_t appendBody(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<BodySink*>(user);
  const size_t n = size * count;
  if (n > sink->max - std::min(sink->max, sink->body->size())) {
    sink->too_large = true;
    return 0;
  }
  sink->body->append(data, n);
  return n;
}

struct CurlSlist {
  curl_slist* list = nullptr;
  CurlSlist() = default;
  CurlSlist(const CurlSlist&) = delete;
  CurlSlist& operator=(const CurlSlist&) = delete;
  ~CurlSlist() { curl_slist_free_all(list); }
  bool append(const std::string& line) {
    curl_slist* next = curl_slist_append(list, line.c_str());
    if (next == nullptr) return false;
    list = next;
    return true;
  }
};

}  // namespace shardscaler::promql
