// How a message or a field value is written into a line: JSON string literals and logfmt values.
#pragma once

#include <string>
#include <string_view>

#include "shardscaler/base/log_field.h"

namespace shardscaler::base {

// A JSON string literal, quotes included: ", \ and control characters escaped (DEL and
// non-ASCII kept as they are), and each ill-formed UTF-8 sequence replaced by U+FFFD, so the
// line stays valid JSON (and readable text) whatever bytes a server sent us.
std::string jsonString(std::string_view s);

// A field in logfmt, " key=value": the value bare when it is one plain token, else a quoted,
// escaped string.
void appendTextField(std::string& out, const LogField& field);

// A text message keeps its quotes and backslashes as they are (it is read, not parsed), but a
// control character is escaped so one event stays one line.
void appendTextMessage(std::string& out, std::string_view msg);

}  // namespace shardscaler::base
