// Server-side TLS contexts built from a ServingCertificate and an optional client trust bundle,
// cached so that a context is built once per certificate/trust pair. I/O thread only.
#pragma once

#include <memory>

#include <boost/asio/ssl/context.hpp>

#include "shardscaler/base/expected.h"
#include "shardscaler/certificates/certificate_source.h"
#include "shardscaler/certificates/trust_bundle.h"
#include "shardscaler/serving/http_server.h"

namespace shardscaler::serving::detail {

class TlsContextCache {
 public:
  TlsContextCache(std::shared_ptr<const certificates::CertificateSource> certificates,
                  ClientCertificateMode mode,
                  std::shared_ptr<const certificates::TrustBundleSlot> trust)
      : certificates_(std::move(certificates)), mode_(mode), trust_slot_(std::move(trust)) {}

  // The context for the current certificate and trust bundle (TLS 1.2 and 1.3 only, AEAD ciphers
  // only, no renegotiation, ALPN "http/1.1"); an error when there is no certificate yet or it
  // cannot be used. `rebuilt` is set when this call looked at a new certificate or trust bundle
  // (to report a change, or a failure, once).
  Expected<std::shared_ptr<boost::asio::ssl::context>> current(bool* rebuilt);

 private:
  std::shared_ptr<const certificates::CertificateSource> certificates_;
  ClientCertificateMode mode_;
  std::shared_ptr<const certificates::TrustBundleSlot> trust_slot_;
  std::shared_ptr<const certificates::ServingCertificate> certificate_;
  std::shared_ptr<const certificates::TrustBundle> trust_;
  // Built for certificate_ and trust_, or why they give no context.
  Expected<std::shared_ptr<boost::asio::ssl::context>> context_;
};

}  // namespace shardscaler::serving::detail
