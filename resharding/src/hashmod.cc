#include "shardscaler/resharding/hashmod.h"

#include <openssl/evp.h>

#include <array>
#include <stdexcept>

namespace shardscaler::resharding {

uint64_t hashmod(std::string_view value, uint64_t modulus) {
  if (modulus == 0) throw std::invalid_argument("hashmod needs a modulus above 0");
  std::array<unsigned char, 16> digest{};
  unsigned int size = 0;
  if (EVP_Digest(value.data(), value.size(), digest.data(), &size, EVP_md5(), nullptr) != 1 ||
      size != digest.size()) {
    throw std::runtime_error("MD5 is not available from libcrypto");
  }
  uint64_t tail = 0;
  for (size_t i = 8; i < digest.size(); ++i) tail = (tail << 8) | digest[i];
  return tail % modulus;
}

}  // namespace shardscaler::resharding
