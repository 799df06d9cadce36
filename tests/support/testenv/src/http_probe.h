// One-shot HTTP(S) GETs used to tell when the test servers are ready.
// Never retries by itself: the caller owns the deadline.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

namespace shardscaler::testenv::control_plane_detail {

struct HttpProbe {
  std::filesystem::path ca_file;  // verify the server against this CA (https)
  std::string bearer_token;
  std::chrono::milliseconds timeout{2000};
};

struct HttpResponse {
  long status = 0;  // 0 when no response arrived
  std::string body;
  std::string error;  // transport error, if any
};

HttpResponse httpGet(const std::string& url, const HttpProbe& probe);

}  // namespace shardscaler::testenv::control_plane_detail
