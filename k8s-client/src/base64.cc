#include "shardscaler/k8s_client/base64.h"

#include <openssl/evp.h>

#include <climits>
#include <vector>

namespace shardscaler::k8s {

std::string base64Encode(std::string_view data) {
  if (data.empty()) return {};
  if (data.size() > INT_MAX / 4 * 3) return {};
  std::vector<unsigned char> out(4 * ((data.size() + 2) / 3) + 1);
  const int length =
      EVP_EncodeBlock(out.data(), reinterpret_cast<const unsigned char*>(data.data()),
                      static_cast<int>(data.size()));
  return std::string(reinterpret_cast<const char*>(out.data()), static_cast<std::size_t>(length));
}

std::optional<std::string> base64Decode(std::string_view text) {
  if (text.empty()) return std::string();
  if (text.size() % 4 != 0 || text.size() > INT_MAX) return std::nullopt;
  for (const char c : text) {
    // EVP_DecodeBlock skips some whitespace; Kubernetes' encoding/json does not accept it.
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') return std::nullopt;
  }
  std::vector<unsigned char> out(text.size() / 4 * 3);
  const int length =
      EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(text.data()),
                      static_cast<int>(text.size()));
  if (length < 0) return std::nullopt;
  // EVP_DecodeBlock counts the padding as zero bytes.
  std::size_t size = static_cast<std::size_t>(length);
  if (text.ends_with("==")) {
    size -= 2;
  } else if (text.ends_with("=")) {
    size -= 1;
  }
  return std::string(reinterpret_cast<const char*>(out.data()), size);
}

}  // namespace shardscaler::k8s
