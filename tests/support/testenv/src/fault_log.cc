#include "fault_log.h"

#include <chrono>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "shardscaler/k8s_client/meta_time.h"

namespace shardscaler::testenv::control_plane_detail {

FaultLog::FaultLog(std::filesystem::path path)
    : path_(std::move(path)), out_(path_, std::ios::app) {
  if (!out_) throw std::runtime_error("fault proxy: cannot open " + path_.string());
}

void FaultLog::record(ApiFault fault, const RequestInfo& request, const std::string& method,
                      const std::string& detail) {
  const nlohmann::json line{{"time", k8s::formatMicroTime(std::chrono::system_clock::now())},
                            {"fault", toString(fault)},
                            {"verb", request.verb},
                            {"method", method},
                            {"path", request.path},
                            {"detail", detail}};
  std::lock_guard lock(mutex_);
  out_ << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  out_.flush();
}

}  // namespace shardscaler::testenv::control_plane_detail
