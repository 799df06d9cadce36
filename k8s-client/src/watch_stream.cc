#include "shardscaler/k8s_client/watch_stream.h"

#include <utility>

namespace shardscaler::k8s {

Result<WatchEvent> decodeWatchEvent(std::string_view json_text) {
  auto parsed = Json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return makeError(ErrorKind::Decode,
                     "watch event is not a JSON object: " + std::string(json_text.substr(0, 200)));
  }
  auto type = parsed.find("type");
  auto object = parsed.find("object");
  if (type == parsed.end() || !type->is_string() || object == parsed.end()) {
    return makeError(ErrorKind::Decode, "watch event without type or object: " +
                                            std::string(json_text.substr(0, 200)));
  }
  const auto& name = type->get_ref<const std::string&>();
  WatchEvent event{.type = WatchEventType::Added, .object = std::move(*object)};
  if (name == "ADDED") {
    event.type = WatchEventType::Added;
  } else if (name == "MODIFIED") {
    event.type = WatchEventType::Modified;
  } else if (name == "DELETED") {
    event.type = WatchEventType::Deleted;
  } else if (name == "BOOKMARK") {
    event.type = WatchEventType::Bookmark;
  } else if (name == "ERROR") {
    event.type = WatchEventType::Error;
  } else {
    return makeError(ErrorKind::Decode, "watch event of unknown type \"" + name + "\"");
  }
  return event;
}

Result<bool> WatchStreamDecoder::feed(std::string_view bytes, const Sink& sink) {
  pending_.append(bytes);
  size_t consumed = 0;  // bytes of pending_ that belong to events already emitted
  bool keep_going = true;
  for (size_t i = scanned_; i < pending_.size() && keep_going; ++i) {
    char c = pending_[i];
    if (depth_ == 0) {
      // Between events only whitespace may appear (the server ends each with a newline).
      if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
        consumed = i + 1;
        continue;
      }
      if (c != '{') {
        return makeError(ErrorKind::Decode, "watch stream: unexpected byte '" + std::string(1, c) +
                                                "' between events");
      }
      consumed = i;
      depth_ = 1;
      continue;
    }
    if (in_string_) {
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == '"') {
        in_string_ = false;
      }
      continue;
    }
    if (c == '"') {
      in_string_ = true;
    } else if (c == '{' || c == '[') {
      ++depth_;
    } else if (c == '}' || c == ']') {
      if (--depth_ == 0) {
        auto event =
            decodeWatchEvent(std::string_view(pending_).substr(consumed, i + 1 - consumed));
        if (!event) return std::unexpected(std::move(event.error()));
        consumed = i + 1;
        keep_going = sink(std::move(*event));
      }
    }
  }
  pending_.erase(0, consumed);
  scanned_ = pending_.size();
  if (!keep_going) {
    // Whatever followed the last event is dropped with the stream.
    pending_.clear();
    scanned_ = 0;
    depth_ = 0;
    in_string_ = escaped_ = false;
  }
  return keep_going;
}

}  // namespace shardscaler::k8s
