#include "shardscaler/k8s_client/list_stream.h"

#include <utility>

namespace shardscaler::k8s {
namespace {

bool isSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

Result<Json> decode(std::string_view text, const FieldMask* fields) {
  if (fields != nullptr) return parseProjected(text, *fields);
  auto parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return makeError(ErrorKind::Decode, "not JSON");
  return parsed;
}

}  // namespace

ListStreamDecoder::ListStreamDecoder(const FieldMask* item_fields) : item_fields_(item_fields) {}

Result<void> ListStreamDecoder::feed(std::string_view bytes) {
  if (!error_.empty()) return makeError(ErrorKind::Decode, error_);
  std::size_t i = 0;
  while (i < bytes.size()) {
    Result<void> scanned;
    if (!in_items_) {
      scanRest(bytes, i);
    } else if (depth_ == 2) {
      scanned = scanBetweenItems(bytes, i);
    } else {
      scanned = scanItem(bytes, i);
    }
    if (!scanned) {
      error_ = scanned.error().message;
      return scanned;
    }
  }
  return {};
}

// Outside the items: every byte is kept. Stops after the '[' that opens the top-level "items".
void ListStreamDecoder::scanRest(std::string_view bytes, std::size_t& i) {
  const std::size_t start = i;
  for (; i < bytes.size(); ++i) {
    const char c = bytes[i];
    const bool was_in_string = strings_.inString();
    if (strings_.consume(c)) {
      if (!was_in_string) {  // the opening quote
        in_key_ = depth_ == 1 && key_next_;
        if (in_key_) {
          key_.clear();
          key_next_ = false;
        }
      } else if (!strings_.inString()) {  // the closing quote
        in_key_ = false;
      } else if (in_key_) {
        key_ += c;
      }
      continue;
    }
    if (c == '{') {
      if (depth_ == 0) top_is_object_ = true;
      key_next_ = ++depth_ == 1;
    } else if (c == '[') {
      if (depth_ == 1 && key_ == "items" && !items_seen_) {
        items_seen_ = in_items_ = true;
        depth_ = 2;
        rest_.append(bytes.substr(start, ++i - start));
        return;
      }
      ++depth_;
    } else if (c == '}' || c == ']') {
      --depth_;
    } else if (c == ',' && depth_ == 1 && top_is_object_) {
      key_next_ = true;
    }
  }
  rest_.append(bytes.substr(start));
}

// Between two items: whitespace, and one comma between two items (dropped), until an item or
// the array's end.
Result<void> ListStreamDecoder::scanBetweenItems(std::string_view bytes, std::size_t& i) {
  for (; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (isSpace(c)) continue;
    const bool after_item = !items_.empty() && !comma_;
    if (c == ',' && after_item) {
      comma_ = true;
    } else if (c == '{' && !after_item) {
      comma_ = false;
      depth_ = 3;
      item_ = '{';
      ++i;
      return {};
    } else if (c == ']' && !comma_) {
      in_items_ = false;
      depth_ = 1;
      rest_ += ']';
      ++i;
      return {};
    } else {
      return makeError(ErrorKind::Decode,
                       "list: unexpected '" + std::string(1, c) + "' in \"items\" after item " +
                           std::to_string(items_.size()) + " (each item must be an object)");
    }
  }
  return {};
}

// Inside an item: its bytes are kept until the brace that closes it, then decoded.
Result<void> ListStreamDecoder::scanItem(std::string_view bytes, std::size_t& i) {
  const std::size_t start = i;
  for (; i < bytes.size(); ++i) {
    i = strings_.nextSignificant(bytes, i);
    if (i == bytes.size()) break;
    const char c = bytes[i];
    if (strings_.consume(c)) continue;
    if (c == '{' || c == '[') {
      ++depth_;
    } else if ((c == '}' || c == ']') && --depth_ == 2) {
      item_.append(bytes.substr(start, ++i - start));
      return decodeItem();
    }
  }
  item_.append(bytes.substr(start));
  return {};
}

Result<void> ListStreamDecoder::decodeItem() {
  auto item = decode(item_, item_fields_);
  if (!item) {
    return makeError(ErrorKind::Decode, "list item " + std::to_string(items_.size()) + ": " +
                                            item.error().message + ": " + item_.substr(0, 200));
  }
  items_.push_back(std::move(*item));
  item_.clear();
  return {};
}

Result<Json> ListStreamDecoder::finish() {
  if (!error_.empty()) return makeError(ErrorKind::Decode, error_);
  if (in_items_ || depth_ != 0) return makeError(ErrorKind::Decode, "list: the body was cut short");
  Result<Json> list = [&]() -> Result<Json> {
    if (item_fields_ == nullptr) return decode(rest_, nullptr);
    const FieldMask list_fields = FieldMask::keepAll().put({"items"}, *item_fields_);
    return decode(rest_, &list_fields);
  }();
  if (!list) {
    return makeError(ErrorKind::Decode, list.error().message + ": " + rest_.substr(0, 200));
  }
  if (items_seen_ && list->is_object()) (*list)["items"] = std::move(items_);
  items_ = Json::array();
  return list;
}

}  // namespace shardscaler::k8s
