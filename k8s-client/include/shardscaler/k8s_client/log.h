// Log events of the Kubernetes client, with their fields kept apart from the message, handed to
// one process-wide sink. Must never depend on a component above k8s-client nor drop a field.
#pragma once

#include <concepts>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace shardscaler::k8s {

enum class LogLevel { Debug, Info, Warn, Error };

// One key/value pair of an event; numbers and booleans are marked raw so a JSON sink can leave
// them unquoted. The same shape as telemetry's LogField, which k8s-client may not include.
class LogField {
 public:
  LogField(std::string_view key, std::string_view value) : key_(key), value_(value) {}
  LogField(std::string_view key, const std::string& value) : key_(key), value_(value) {}
  LogField(std::string_view key, const char* value) : key_(key), value_(value) {}
  LogField(std::string_view key, bool value)
      : key_(key), value_(value ? "true" : "false"), raw_(true) {}
  template <std::integral T>
  requires(!std::same_as<T, bool> && !std::same_as<T, char>) LogField(std::string_view key, T value)
      : key_(key), value_(std::to_string(value)), raw_(true) {}

  const std::string& key() const { return key_; }
  const std::string& value() const { return value_; }
  // True for a number or a boolean (true/false), false for a string.
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

}  // namespace shardscaler::k8s
