#include "fault_proxy_state.h"

namespace shardscaler::testenv::control_plane_detail {

void FaultProxyState::injected(ApiFault fault, const RequestInfo& request,
                               const std::string& method, const std::string& detail) {
  switch (fault) {
    case ApiFault::ServerError:
      ++counters.server_error;
      break;
    case ApiFault::Conflict:
      ++counters.conflict;
      break;
    case ApiFault::TooManyRequests:
      ++counters.too_many_requests;
      break;
    case ApiFault::CutWatch:
      ++counters.cut_watch;
      break;
    case ApiFault::Latency:
      ++counters.latency;
      break;
  }
  log.record(fault, request, method, detail);
}

}  // namespace shardscaler::testenv::control_plane_detail
