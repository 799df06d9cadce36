#include "shardscaler/certificates/openssl_handles.h"

#include <openssl/err.h>

#include <climits>

namespace shardscaler::certificates {

std::string opensslError(std::string_view what) {
  std::string message(what);
  bool first = true;
  while (const unsigned long code = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof buf);
    message += first ? ": " : "; ";
    message += buf;
    first = false;
  }
  return message;
}

BioPtr memoryBio(std::string_view data) {
  // PEM inputs are small; a size beyond int would be garbage anyway and reads as empty.
  const int size = data.size() > INT_MAX ? 0 : static_cast<int>(data.size());
  return BioPtr(BIO_new_mem_buf(data.data(), size));
}

std::string bioContents(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return size > 0 ? std::string(data, static_cast<std::size_t>(size)) : std::string();
}

}  // namespace shardscaler::certificates
