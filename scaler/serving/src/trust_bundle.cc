#include "shardscaler/serving/trust_bundle.h"

namespace shardscaler::serving {

std::expected<std::shared_ptr<const TrustBundle>, std::string> TrustBundle::fromPem(
    std::string pem) {
  auto certificates = Certificate::allFromPem(pem);
  if (!certificates) return std::unexpected("trust bundle: " + certificates.error());
  return std::shared_ptr<const TrustBundle>(
      new TrustBundle(std::move(*certificates), std::move(pem)));
}

}  // namespace shardscaler::serving
