// What every connection of the API fault proxy shares: the TLS contexts of both sides, where
// the API server is, the fault plan, the fault log and the counters. Owned by ApiFaultProxy;
// sessions only borrow it. Nothing here does I/O except the log's appends.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include "fault_log.h"
#include "fault_plan.h"
#include "request_info.h"
#include "shardscaler/testenv/api_fault_proxy.h"

namespace shardscaler::testenv::control_plane_detail {

struct FaultProxyCounters {
  std::atomic<std::uint64_t> requests{0};
  std::atomic<std::uint64_t> forwarded{0};
  std::atomic<std::uint64_t> server_error{0};
  std::atomic<std::uint64_t> conflict{0};
  std::atomic<std::uint64_t> too_many_requests{0};
  std::atomic<std::uint64_t> cut_watch{0};
  std::atomic<std::uint64_t> latency{0};
  std::atomic<std::uint64_t> upstream_errors{0};
};

struct FaultProxyState {
  FaultProxyState(std::uint64_t seed, const std::filesystem::path& log_path)
      : plan(seed), log(log_path) {}

  // Counts a fault and writes its log line.
  void injected(ApiFault fault, const RequestInfo& request, const std::string& method,
                const std::string& detail);

  boost::asio::ssl::context server_tls{boost::asio::ssl::context::tls_server};
  boost::asio::ssl::context client_tls{boost::asio::ssl::context::tls_client};
  boost::asio::ip::tcp::endpoint upstream;
  FaultPlan plan;
  FaultLog log;
  FaultProxyCounters counters;
};

}  // namespace shardscaler::testenv::control_plane_detail
