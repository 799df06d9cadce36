#include "fault_log.h"

#include <chrono>
#include <ctime>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace shardscaler::testenv::control_plane_detail {

namespace {

// RFC 3339 UTC with microseconds, as the operator emulator's action log writes it, so the two
// files sort together.
std::string nowRfc3339Micros() {
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const auto seconds = static_cast<std::time_t>(micros / 1000000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buf[40];
  const std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(buf + n, sizeof buf - n, ".%06lldZ", static_cast<long long>(micros % 1000000));
  return buf;
}

}  // namespace

FaultLog::FaultLog(std::filesystem::path path)
    : path_(std::move(path)), out_(path_, std::ios::app) {
  if (!out_) throw std::runtime_error("fault proxy: cannot open " + path_.string());
}

void FaultLog::record(ApiFault fault, const ApiRequest& request, const std::string& method,
                      const std::string& detail) {
  const nlohmann::json line{{"time", nowRfc3339Micros()}, {"fault", toString(fault)},
                            {"verb", request.verb},       {"method", method},
                            {"path", request.path},       {"detail", detail}};
  std::lock_guard lock(mutex_);
  out_ << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  out_.flush();
}

}  // namespace shardscaler::testenv::control_plane_detail
