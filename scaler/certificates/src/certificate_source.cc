#include "shardscaler/certificates/certificate_source.h"

#include <utility>

#include "shardscaler/base/expected.h"

namespace shardscaler::certificates {

Expected<std::shared_ptr<const ServingCertificate>> ServingCertificate::fromPem(
    std::string chain_pem, std::string key_pem, std::string ca_bundle_pem) {
  auto chain = Certificate::allFromPem(chain_pem);
  if (!chain) return std::unexpected("certificate: " + chain.error());
  auto key = PrivateKey::fromPem(key_pem);
  if (!key) return std::unexpected("key: " + key.error());
  if (!key->matches(chain->front())) {
    return std::unexpected("the key does not belong to certificate \"" +
                           chain->front().subjectCommonName() + "\"");
  }
  std::vector<Certificate> bundle;
  if (ca_bundle_pem.find_first_not_of(" \t\r\n") != std::string::npos) {
    auto parsed = Certificate::allFromPem(ca_bundle_pem);
    if (!parsed) return std::unexpected("CA bundle: " + parsed.error());
    bundle = std::move(*parsed);
  }
  return std::shared_ptr<const ServingCertificate>(
      new ServingCertificate(std::move(*chain), std::move(*key), std::move(bundle),
                             std::move(chain_pem), std::move(key_pem), std::move(ca_bundle_pem)));
}

ServingCertificate::ServingCertificate(std::vector<Certificate> chain, PrivateKey key,
                                       std::vector<Certificate> ca_bundle, std::string chain_pem,
                                       std::string key_pem, std::string ca_bundle_pem)
    : chain_(std::move(chain)),
      key_(std::move(key)),
      ca_bundle_(std::move(ca_bundle)),
      chain_pem_(std::move(chain_pem)),
      key_pem_(std::move(key_pem)),
      ca_bundle_pem_(std::move(ca_bundle_pem)) {}

bool ServingCertificate::sameAs(const ServingCertificate& other) const {
  return chain_pem_ == other.chain_pem_ && key_pem_ == other.key_pem_ &&
         ca_bundle_pem_ == other.ca_bundle_pem_;
}

// A listener with the lock its calls hold, so that removeListener can wait out a call in
// progress and the listener's owner may die right after.
struct CertificateSlot::ListenerEntry {
  Listener call;
  std::mutex calling;
  bool removed = false;
};

CertificateSlot::CertificateSlot(std::shared_ptr<const ServingCertificate> initial)
    : current_(std::move(initial)) {}

bool CertificateSlot::set(std::shared_ptr<const ServingCertificate> certificate) {
  std::vector<std::shared_ptr<ListenerEntry>> to_call;
  {
    std::lock_guard lock(mutex_);
    if (current_ && certificate && current_->sameAs(*certificate)) return false;
    if (!current_ && !certificate) return false;
    current_ = std::move(certificate);
    for (const auto& [id, listener] : listeners_) to_call.push_back(listener);
  }
  for (const auto& entry : to_call) {
    std::lock_guard calling(entry->calling);
    if (!entry->removed) entry->call();
  }
  return true;
}

std::shared_ptr<const ServingCertificate> CertificateSlot::current() const {
  std::lock_guard lock(mutex_);
  return current_;
}

std::uint64_t CertificateSlot::addListener(Listener listener) {
  auto entry = std::make_shared<ListenerEntry>();
  entry->call = std::move(listener);
  std::lock_guard lock(mutex_);
  const std::uint64_t id = next_id_++;
  listeners_.emplace(id, std::move(entry));
  return id;
}

void CertificateSlot::removeListener(std::uint64_t id) {
  std::shared_ptr<ListenerEntry> entry;
  {
    std::lock_guard lock(mutex_);
    auto it = listeners_.find(id);
    if (it == listeners_.end()) return;
    entry = std::move(it->second);
    listeners_.erase(it);
  }
  std::lock_guard calling(entry->calling);
  entry->removed = true;
}

}  // namespace shardscaler::certificates
