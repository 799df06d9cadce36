// The query interface the rest of shardscaler depends on, so a test can hand in a fake.
// It speaks PromQL only: it never knows what a shard, a pod name or a StatefulSet is.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "shardscaler/promql_client/error.h"
#include "shardscaler/promql_client/query_result.h"

namespace shardscaler::promql {

// GET/POST /api/v1/query
struct InstantQuery {
  std::string query{};
  // Evaluation time; the server's "now" when unset.
  std::optional<std::chrono::system_clock::time_point> time{};
  // The server-side evaluation timeout (the API's `timeout`, capped by -query.timeout).
  std::optional<std::chrono::milliseconds> timeout{};
  // The API's `limit` (maximum number of returned series). Sent only when set: servers that
  // do not know it (Prometheus before 3.x, e.g. Debian's 2.42) ignore it and return everything.
  std::optional<uint64_t> limit{};
};

class PromQuery {
 public:
  virtual ~PromQuery() = default;

  // The result is whatever type the expression evaluates to (vector, scalar or string).
  virtual Result<QueryResult> query(const InstantQuery& q) = 0;
};

}  // namespace shardscaler::promql
