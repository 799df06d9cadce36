// The CAs a server trusts for client certificates, replaceable at run time (the front proxy's
// request-header CA can change). Must never accept an empty or unparsable bundle as "trust all".
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "shardscaler/base/expected.h"
#include "shardscaler/certificates/x509.h"

namespace shardscaler::certificates {

class TrustBundle {
 public:
  // One or more PEM CA certificates; none, or one that does not parse, is an error.
  static Expected<std::shared_ptr<const TrustBundle>> fromPem(std::string pem);

  const std::vector<Certificate>& certificates() const { return certificates_; }
  const std::string& pem() const { return pem_; }

 private:
  TrustBundle(std::vector<Certificate> certificates, std::string pem)
      : certificates_(std::move(certificates)), pem_(std::move(pem)) {}

  std::vector<Certificate> certificates_;
  std::string pem_;
};

// Thread-safe holder: the server reads it for each new connection.
class TrustBundleSlot {
 public:
  TrustBundleSlot() = default;
  explicit TrustBundleSlot(std::shared_ptr<const TrustBundle> initial)
      : current_(std::move(initial)) {}

  void set(std::shared_ptr<const TrustBundle> bundle) {
    std::lock_guard lock(mutex_);
    current_ = std::move(bundle);
  }
  std::shared_ptr<const TrustBundle> current() const {
    std::lock_guard lock(mutex_);
    return current_;
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const TrustBundle> current_;
};

}  // namespace shardscaler::certificates
