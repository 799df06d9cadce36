// A thread-safe pool of libcurl easy handles. Each handle keeps its own live connections, so
// handing the same handles out again is what makes connections get reused across queries.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include <curl/curl.h>

namespace shardscaler::promql {

class CurlHandlePool {
 public:
  struct Release {
    CurlHandlePool* pool;
    void operator()(CURL* handle) const { pool->release(handle); }
  };
  using Handle = std::unique_ptr<CURL, Release>;

  explicit CurlHandlePool(size_t max_idle);
  ~CurlHandlePool();
  CurlHandlePool(const CurlHandlePool&) = delete;
  CurlHandlePool& operator=(const CurlHandlePool&) = delete;

  // A handle reset to defaults but with its connection cache intact; nullptr when libcurl
  // cannot allocate one.
  Handle acquire();

 private:
  void release(CURL* handle);

  const size_t max_idle_;
  std::mutex mutex_;
  std::vector<CURL*> idle_;
};

}  // namespace shardscaler::promql
