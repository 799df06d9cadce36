#include "client_logs.h"

#include <charconv>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "shardscaler/k8s_client/log.h"
#include "shardscaler/telemetry/logging.h"

namespace shardscaler::service {
namespace {

telemetry::LogLevel toTelemetry(k8s::LogLevel level) {
  switch (level) {
    case k8s::LogLevel::Debug:
      return telemetry::LogLevel::Debug;
    case k8s::LogLevel::Info:
      return telemetry::LogLevel::Info;
    case k8s::LogLevel::Warn:
      return telemetry::LogLevel::Warn;
    case k8s::LogLevel::Error:
      return telemetry::LogLevel::Error;
  }
  return telemetry::LogLevel::Info;
}

// A raw k8s field is a boolean or an integer (the only raw values k8s::LogField makes); it is
// rebuilt through telemetry's typed constructors, so nothing else reaches JSON unquoted.
telemetry::LogField toTelemetry(const k8s::LogField& f) {
  const std::string& v = f.value();
  if (!f.raw()) return {f.key(), v};
  if (v == "true" || v == "false") return {f.key(), v == "true"};
  const char* end = v.data() + v.size();
  if (std::int64_t i = 0; std::from_chars(v.data(), end, i).ptr == end) return {f.key(), i};
  if (std::uint64_t u = 0; std::from_chars(v.data(), end, u).ptr == end) return {f.key(), u};
  return {f.key(), v};
}

}  // namespace

void routeClientLogsToTelemetry() {
  k8s::setLogSink([](k8s::LogLevel level, std::string_view msg,
                     std::span<const k8s::LogField> fields) {
    std::vector<telemetry::LogField> converted;
    converted.reserve(fields.size());
    for (const k8s::LogField& f : fields) converted.push_back(toTelemetry(f));
    telemetry::logEvent(toTelemetry(level), msg, std::span<const telemetry::LogField>(converted));
  });
}

}  // namespace shardscaler::service
