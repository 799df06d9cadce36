#include "shardscaler/k8s_client/watch_stream.h"

#include <utility>

namespace shardscaler::k8s {

namespace {

FieldMask eventMask(const FieldMask& object_fields) {
  return FieldMask::keepAll().put({"object"}, object_fields);
}

Result<WatchEvent> decodeEvent(std::string_view json_text, const FieldMask* event_fields) {
  Json parsed;
  if (event_fields != nullptr) {
    auto projected = parseProjected(json_text, *event_fields);
    if (!projected) {
      return makeError(ErrorKind::Decode, "watch event: " + projected.error().message + ": " +
                                              std::string(json_text.substr(0, 200)));
    }
    parsed = std::move(*projected);
  } else {
    parsed = Json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  }
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
  // A bookmark's resourceVersion and an error's Status must not go through the objects' mask
  // (it may not keep them); both are rare and small, so decode them again whole.
  if (event_fields != nullptr &&
      (event.type == WatchEventType::Bookmark || event.type == WatchEventType::Error)) {
    return decodeEvent(json_text, nullptr);
  }
  return event;
}

}  // namespace

Result<WatchEvent> decodeWatchEvent(std::string_view json_text, const FieldMask* object_fields) {
  if (object_fields == nullptr) return decodeEvent(json_text, nullptr);
  const FieldMask event_fields = eventMask(*object_fields);
  return decodeEvent(json_text, &event_fields);
}

WatchStreamDecoder::WatchStreamDecoder(std::shared_ptr<const FieldMask> object_fields)
    : object_fields_(std::move(object_fields)) {
  if (object_fields_) event_fields_ = std::make_shared<const FieldMask>(eventMask(*object_fields_));
}

Result<bool> WatchStreamDecoder::feed(std::string_view bytes, const Sink& sink) {
  pending_.append(bytes);
  size_t consumed = 0;  // bytes of pending_ that belong to events already emitted
  bool keep_going = true;
  for (size_t i = scanned_; i < pending_.size() && keep_going; ++i) {
    i = strings_.nextSignificant(pending_, i);
    if (i == pending_.size()) break;
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
    if (strings_.consume(c)) continue;
    if (c == '{' || c == '[') {
      ++depth_;
    } else if (c == '}' || c == ']') {
      if (--depth_ == 0) {
        auto event = decodeEvent(std::string_view(pending_).substr(consumed, i + 1 - consumed),
                                 event_fields_.get());
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
    strings_.reset();
  }
  return keep_going;
}

}  // namespace shardscaler::k8s
