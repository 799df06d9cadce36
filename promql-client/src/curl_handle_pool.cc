#include "curl_handle_pool.h"

#include <mutex>

namespace shardscaler::promql {

namespace {
// curl_global_init is not thread-safe on every libcurl build; do it exactly once.
void initCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}
}  // namespace

CurlHandlePool::CurlHandlePool(size_t max_idle) : max_idle_(max_idle) { initCurlOnce(); }

CurlHandlePool::~CurlHandlePool() {
  for (CURL* handle : idle_) curl_easy_cleanup(handle);
}

CurlHandlePool::Handle CurlHandlePool::acquire() {
  CURL* handle = nullptr;
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      handle = idle_.back();
      idle_.pop_back();
    }
  }
  if (handle != nullptr) {
    // Reset keeps live connections, the DNS cache and TLS sessions; only options go.
    curl_easy_reset(handle);
  } else {
    handle = curl_easy_init();
  }
  return Handle(handle, Release{this});
}

void CurlHandlePool::release(CURL* handle) {
  if (handle == nullptr) return;
  {
    std::lock_guard lock(mutex_);
    if (idle_.size() < max_idle_) {
      idle_.push_back(handle);
      return;
    }
  }
  curl_easy_cleanup(handle);
}

}  // namespace shardscaler::promql
