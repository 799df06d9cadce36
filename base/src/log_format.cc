// The parts of a line spdlog's pattern language has no flag for, as custom flags of a
// pattern_formatter: the level as this log names it, the escaped message, the fields.
#include <algorithm>
#include <cctype>
#include <ctime>
#include <memory>
#include <string>

#include <spdlog/pattern_formatter.h>

#include "log_event.h"
#include "log_text.h"
#include "shardscaler/base/log.h"

namespace shardscaler::base {
namespace {

void append(spdlog::memory_buf_t& out, std::string_view s) {
  out.append(s.data(), s.data() + s.size());
}

std::string_view levelName(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
      return "trace";
    case spdlog::level::debug:
      return "debug";
    case spdlog::level::info:
      return "info";
    case spdlog::level::warn:
      return "warn";
    case spdlog::level::err:
      return "error";
    case spdlog::level::critical:
      return "critical";
    default:
      return "off";
  }
}

// A custom flag that writes its part in the layout of `format_`.
template <typename Flag>
class LayoutFlag : public spdlog::custom_flag_formatter {
 public:
  explicit LayoutFlag(LogFormat format) : format_(format) {}
  std::unique_ptr<spdlog::custom_flag_formatter> clone() const override {
    return std::make_unique<Flag>(format_);
  }

 protected:
  LogFormat format_;
};

class LevelFlag final : public LayoutFlag<LevelFlag> {
 public:
  using LayoutFlag::LayoutFlag;
  void format(const spdlog::details::log_msg& msg, const std::tm& /*time*/,
              spdlog::memory_buf_t& dest) override {
    std::string level(levelName(msg.level));
    if (format_ == LogFormat::Text) {  // "INFO ", "ERROR": upper case, five wide
      for (char& c : level) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      level.resize(std::max<size_t>(level.size(), 5), ' ');
    }
    append(dest, level);
  }
};

class MessageFlag final : public LayoutFlag<MessageFlag> {
 public:
  using LayoutFlag::LayoutFlag;
  void format(const spdlog::details::log_msg& msg, const std::tm& /*time*/,
              spdlog::memory_buf_t& dest) override {
    const std::string_view payload(msg.payload.data(), msg.payload.size());
    std::string out;
    if (format_ == LogFormat::Text) {
      appendTextMessage(out, payload);
    } else {
      if (msg.logger_name.size() > 0) {
        out += ",\"logger\":";
        out += jsonString({msg.logger_name.data(), msg.logger_name.size()});
      }
      out += ",\"msg\":";
      out += jsonString(payload);
    }
    append(dest, out);
  }
};

class FieldsFlag final : public LayoutFlag<FieldsFlag> {
 public:
  using LayoutFlag::LayoutFlag;
  void format(const spdlog::details::log_msg& /*msg*/, const std::tm& /*time*/,
              spdlog::memory_buf_t& dest) override {
    std::string out;
    const PendingFields& pending = pendingFields();
    for (const auto fields : {pending.context, pending.call}) {
      for (const LogField& f : fields) appendField(out, f);
    }
    append(dest, out);
  }

 private:
  void appendField(std::string& out, const LogField& f) const {
    if (format_ == LogFormat::Text) {
      appendTextField(out, f);
      return;
    }
    out += ',';
    // A field may not shadow the fixed members a log pipeline keys on.
    const std::string& key = f.key();
    const bool fixed = key == "ts" || key == "level" || key == "msg" || key == "logger";
    out += jsonString(fixed ? "field_" + key : key);
    out += ':';
    out += f.raw() ? f.value() : jsonString(f.value());
  }
};

}  // namespace

std::unique_ptr<spdlog::formatter> makeLogFormatter(LogFormat format) {
  // Time in UTC with milliseconds, RFC 3339; %& level, %? message, %* fields (custom flags).
  constexpr const char* kText = "%Y-%m-%dT%H:%M:%S.%eZ %& %?%*";
  constexpr const char* kJson = R"({"ts":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%&"%?%*})";
  auto formatter =
      std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc, "\n");
  formatter->add_flag<LevelFlag>('&', format)
      .add_flag<MessageFlag>('?', format)
      .add_flag<FieldsFlag>('*', format)
      .set_pattern(format == LogFormat::Json ? kJson : kText);
  return formatter;
}

}  // namespace shardscaler::base
