#include "shardscaler/certificates/trust_bundle.h"

#include "shardscaler/base/expected.h"

namespace shardscaler::certificates {

Expected<std::shared_ptr<const TrustBundle>> TrustBundle::fromPem(std::string pem) {
  auto certificates = Certificate::allFromPem(pem);
  if (!certificates) return std::unexpected("trust bundle: " + certificates.error());
  return std::shared_ptr<const TrustBundle>(
      new TrustBundle(std::move(*certificates), std::move(pem)));
}

}  // namespace shardscaler::certificates
