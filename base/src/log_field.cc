#include "shardscaler/base/log_field.h"

#include <charconv>
#include <cmath>

namespace shardscaler::base {

LogField::LogField(std::string_view key, double value) : key_(key) {
  if (std::isfinite(value)) {
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
    value_.assign(buf, ec == std::errc() ? end : buf);
    raw_ = true;
  } else {
    value_ = std::isnan(value) ? "NaN" : (value > 0 ? "+Inf" : "-Inf");
  }
}

}  // namespace shardscaler::base
