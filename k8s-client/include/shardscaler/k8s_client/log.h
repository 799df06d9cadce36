// Log events of the Kubernetes client, with their fields kept apart from the message, handed to
// one process-wide sink. Must never depend on a component above k8s-client nor drop a field.
#pragma once

#include <concepts>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include <spdlog/common.h>

namespace shardscaler::k8s {

enum class LogLevel { Debug, Info, Warn, Error };

spdlog::level::level_enum toSpdlogLevel(LogLevel level);

// One key/value pair of an event; numbers and booleans are marked raw so a JSON sink can leave
// them unquoted. The one field type of the process: telemetry's structured log uses it too, so
// a client event reaches the service's log unchanged.
class LogField {
 public:
  LogField(std::string_view key, std::string_view value) : key_(key), value_(value) {}
  LogField(std::string_view key, const std::string& value) : key_(key), value_(value) {}
  LogField(std::string_view key, const char* value) : key_(key), value_(value) {}
  LogField(std::string_view key, bool value)
      : key_(key), value_(value ? "true" : "false"), raw_(true) {}
  // A finite number is raw; NaN and the infinities (which JSON lacks) are kept as the strings
  // Prometheus spells them with.
  LogField(std::string_view key, double value);
  template <std::integral T>
  requires(!std::same_as<T, bool> && !std::same_as<T, char>) LogField(std::string_view key, T value)
      : key_(key), value_(std::to_string(value)), raw_(true) {}

  const std::string& key() const { return key_; }
  const std::string& value() const { return value_; }
  // True when the value is a JSON literal (number, true, false) rather than a string.
  bool raw() const { return raw_; }

 private:
  std::string key_;
  std::string value_;
  bool raw_ = false;
};

using LogSink =
    std::function<void(LogLevel level, std::string_view msg, std::span<const LogField> fields)>;

// Replaces the sink every k8s-client event goes to (the service routes them into its structured
// log); an empty sink restores the default: "<msg> k=v ..." through spdlog's default logger.
void setLogSink(LogSink sink);

void log(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields = {});
// The same with fields gathered at run time.
void log(LogLevel level, std::string_view msg, std::span<const LogField> fields);

}  // namespace shardscaler::k8s
