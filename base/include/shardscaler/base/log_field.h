// One key/value pair of a structured log event, kept apart from the message. Must never lose a
// value's type: numbers and booleans stay JSON literals, everything else a string.
#pragma once

#include <concepts>
#include <string>
#include <string_view>

namespace shardscaler::base {

// Numbers and booleans are marked raw so the JSON layout can leave them unquoted.
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

}  // namespace shardscaler::base
