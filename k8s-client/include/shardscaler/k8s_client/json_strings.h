// Follows JSON strings through a byte-by-byte scan, for the scanners that look only at what lies
// outside strings: the watch stream's and the list's splitters, the guard's nesting depth.
#pragma once

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
  void reset() { in_string_ = escaped_ = false; }

 private:
  bool in_string_ = false;
  bool escaped_ = false;
};

}  // namespace shardscaler::k8s
