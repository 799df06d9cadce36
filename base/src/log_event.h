// The one path every event takes, and the fields of the event being formatted on this thread.
#pragma once

#include <span>
#include <string_view>

#include <spdlog/logger.h>

#include "shardscaler/base/log.h"
#include "shardscaler/base/log_field.h"

namespace shardscaler::base {

// spdlog's synchronous loggers format in the caller's thread, inside logger.log(), so the
// formatter sees exactly this event's fields; plain spdlog calls find the spans empty.
struct PendingFields {
  std::span<const LogField> context;
  std::span<const LogField> call;
};
const PendingFields& pendingFields();

// Logs `msg` with the context's fields, then the call's.
void emitEvent(spdlog::logger& logger, LogLevel level, std::string_view msg,
               std::span<const LogField> context, std::span<const LogField> call);

}  // namespace shardscaler::base
