#include "shardscaler/guard/untrusted_text.h"

namespace shardscaler::guard {

std::string untrustedText(std::string_view text, std::size_t max_bytes) {
  const std::string_view kept = text.substr(0, max_bytes);
  std::string out;
  out.reserve(kept.size() + 24);
  for (const char c : kept) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (text.size() > kept.size()) {
    out += "...(" + std::to_string(text.size() - kept.size()) + " more bytes)";
  }
  return out;
}

}  // namespace shardscaler::guard
