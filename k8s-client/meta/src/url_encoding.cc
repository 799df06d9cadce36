#include "shardscaler/k8s_meta/url_encoding.h"

namespace shardscaler::k8s::detail {

std::string percentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    bool unreserved = (byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') ||
                      (byte >= '0' && byte <= '9') || byte == '-' || byte == '.' || byte == '_' ||
                      byte == '~';
    if (unreserved) {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0x0f]);
    }
  }
  return out;
}

void appendQuery(std::string& url, std::string_view key, std::string_view value) {
  if (value.empty()) return;
  url.push_back(url.find('?') == std::string::npos ? '?' : '&');
  url += percentEncode(key);
  url.push_back('=');
  url += percentEncode(value);
}

}  // namespace shardscaler::k8s::detail
