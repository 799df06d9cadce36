// Finds the handler for a method and path: exact paths first, then the longest prefix.
// Filled before the server starts and read-only after, so lookups need no lock.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/serving/http_exchange.h"

namespace shardscaler::serving::detail {

class Router {
 public:
  // method "*" matches every method, "GET" also HEAD. max_body_bytes: the largest body the route
  // reads.
  void add(std::string method, std::string path, bool prefix, Handler handler,
           std::size_t max_body_bytes);

  struct Match {
    const Handler* handler = nullptr;  // nullptr: 404 (allowed empty) or 405 (allowed set)
    std::string_view route;
    std::string allowed;  // "GET, POST" when the path exists for other methods
    std::size_t max_body_bytes = 0;
  };
  Match find(std::string_view method, std::string_view path) const;

 private:
  struct Route {
    std::string method;
    std::string path;
    bool prefix = false;
    Handler handler;
    std::size_t max_body_bytes = 0;
  };
  std::vector<Route> routes_;
};

}  // namespace shardscaler::serving::detail
