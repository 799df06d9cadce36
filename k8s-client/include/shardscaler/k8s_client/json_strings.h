// Follows JSON strings through a byte-by-byte scan, for the scanners that look only at what lies
// outside strings: the watch stream's and the list's splitters, the guard's nesting depth.
#pragma once

#include <cstddef>
#include <cstring>
#include <string_view>

namespace shardscaler::k8s {

class JsonStringTracker {
 public:
  // True when c belongs to a string, its quotes included; false when it is outside every string.
  bool consume(char c) {
    if (!in_string_) {
      in_string_ = c == '"';
      return in_string_;
    }
    if (escaped_) {
      escaped_ = false;
    } else if (c == '\\') {
      escaped_ = true;
    } else if (c == '"') {
      in_string_ = false;
    }
    return true;
  }

  bool inString() const { return in_string_; }

  // Where, from `at`, the next byte that consume() must see lies: inside a string only a quote
  // or a backslash changes anything, and most of an API object's bytes are inside strings, so
  // a scanner jumps over the rest (memchr) instead of looking at each byte. Outside a string,
  // or right after a backslash, that is `at` itself.
  std::size_t nextSignificant(std::string_view bytes, std::size_t at) const {
    if (!in_string_ || escaped_ || at >= bytes.size()) return at;
    const char* from = bytes.data() + at;
    const std::size_t left = bytes.size() - at;
    const void* quote = std::memchr(from, '"', left);
    const std::size_t span = quote != nullptr ? static_cast<const char*>(quote) - from : left;
    const void* backslash = std::memchr(from, '\\', span);
    return at + (backslash != nullptr ? static_cast<const char*>(backslash) - from : span);
  }
  void reset() { in_string_ = escaped_ = false; }

 private:
  bool in_string_ = false;
  bool escaped_ = false;
};

}  // namespace shardscaler::k8s
