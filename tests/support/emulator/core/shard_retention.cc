#include "shard_retention.h"

#include <regex>

#include "shardscaler/k8s_meta/time.h"

namespace shardscaler::emulator {

namespace {

constexpr std::string_view kNever = "0001-01-01T00:00:00Z";

std::string stringAt(const nlohmann::json& object, const nlohmann::json::json_pointer& at) {
  const nlohmann::json& value = object.contains(at) ? object[at] : nlohmann::json();
  return value.is_string() ? value.get<std::string>() : std::string();
}

}  // namespace

std::optional<std::chrono::milliseconds> parsePrometheusDuration(std::string_view text) {
  if (text == "0") return std::chrono::milliseconds(0);
  static const std::regex kDuration(
      "^(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?$");
  std::cmatch m;
  if (text.empty() || !std::regex_match(text.begin(), text.end(), m, kDuration)) {
    return std::nullopt;
  }
  constexpr long long kUnits[] = {365LL * 24 * 3600 * 1000,
                                  7LL * 24 * 3600 * 1000,
                                  24LL * 3600 * 1000,
                                  3600LL * 1000,
                                  60LL * 1000,
                                  1000,
                                  1};
  long long total = 0;
  for (int i = 0; i < 7; ++i) {
    if (m[2 + 2 * i].matched) total += std::stoll(m[2 + 2 * i].str()) * kUnits[i];
  }
  return std::chrono::milliseconds(total);
}

std::string retentionDeadline(const nlohmann::json& target,
                              std::chrono::system_clock::time_point now) {
  using Ptr = nlohmann::json::json_pointer;
  std::string period = stringAt(target, Ptr("/spec/shardRetentionPolicy/retain/retentionPeriod"));
  if (period.empty()) {
    period = stringAt(target, Ptr("/spec/retention"));
    if (period.empty() && !stringAt(target, Ptr("/spec/retentionSize")).empty()) {
      return std::string(kNever);
    }
  }
  const auto duration = period.empty()
                            ? std::chrono::hours(24)
                            : parsePrometheusDuration(period).value_or(std::chrono::hours(24));
  if (duration.count() == 0) return std::string(kNever);
  return k8s::formatRfc3339(k8s::Timestamp::fromTimePoint(
      now + std::chrono::duration_cast<std::chrono::system_clock::duration>(duration)));
}

std::optional<std::chrono::system_clock::time_point> parseDeadline(std::string_view text) {
  if (text == kNever) return std::chrono::system_clock::time_point{};
  auto parsed = k8s::parseRfc3339(text);
  if (!parsed) return std::nullopt;
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          parsed->seconds.time_since_epoch() + std::chrono::nanoseconds(parsed->nanos)));
}

}  // namespace shardscaler::emulator
