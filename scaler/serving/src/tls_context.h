// Server-side TLS contexts built from a ServingCertificate and an optional client trust bundle,
// cached so that a context is built once per certificate/trust pair. I/O thread only.
#pragma once

#include <memory>
#include <string>

#include <boost/asio/ssl/context.hpp>

#include "shardscaler/base/expected.h"
#include "shardscaler/serving/certificate_source.h"
#include "shardscaler/serving/https_server.h"
#include "shardscaler/serving/trust_bundle.h"

namespace shardscaler::serving::detail {

// TLS 1.2 and 1.3 only, AEAD ciphers only, no renegotiation, ALPN "http/1.1".
Expected<std::shared_ptr<boost::asio::ssl::context>> makeServerTlsContext(
    const ServingCertificate& certificate, ClientCertificateMode mode, const TrustBundle* trust);

class TlsContextCache {
 public:
  TlsContextCache(std::shared_ptr<const CertificateSource> certificates, ClientCertificateMode mode,
                  std::shared_ptr<const TrustBundleSlot> trust)
      : certificates_(std::move(certificates)), mode_(mode), trust_slot_(std::move(trust)) {}

  // The context for the current certificate and trust bundle; an error when there is no
  // certificate yet or it cannot be used. `rebuilt` is set when this call looked at a new
  // certificate or trust bundle (to report a change, or a failure, once).
  Expected<std::shared_ptr<boost::asio::ssl::context>> current(bool* rebuilt);

 private:
  std::shared_ptr<const CertificateSource> certificates_;
  ClientCertificateMode mode_;
  std::shared_ptr<const TrustBundleSlot> trust_slot_;
  std::shared_ptr<const ServingCertificate> certificate_;
  std::shared_ptr<const TrustBundle> trust_;
  std::shared_ptr<boost::asio::ssl::context> context_;
  std::string error_;  // why the current pair gives no context
};

}  // namespace shardscaler::serving::detail
