// The certificate an HTTPS server presents, and where it comes from: a source whose certificate
// may change at any time (rotation). Must never hand out a certificate whose key does not match.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "shardscaler/base/expected.h"
#include "shardscaler/certificates/x509.h"

namespace shardscaler::certificates {

// Immutable: a server keeps the one it started a connection with for as long as it needs it.
class ServingCertificate {
 public:
  // chain_pem: the leaf first, then any intermediates; key_pem: the leaf's key; ca_bundle_pem: the
  // CAs clients should trust for it (may be empty when someone else publishes them). Errors name
  // the part at fault ("tls.key: ...", "the key does not belong to the certificate").
  static Expected<std::shared_ptr<const ServingCertificate>> fromPem(
      std::string chain_pem, std::string key_pem, std::string ca_bundle_pem = {});

  const Certificate& leaf() const { return chain_.front(); }
  const std::vector<Certificate>& chain() const { return chain_; }
  const PrivateKey& key() const { return key_; }
  const std::vector<Certificate>& caBundle() const { return ca_bundle_; }
  const std::string& chainPem() const { return chain_pem_; }
  const std::string& keyPem() const { return key_pem_; }
  const std::string& caBundlePem() const { return ca_bundle_pem_; }

  // Same chain, key and CA bundle (byte for byte).
  bool sameAs(const ServingCertificate& other) const;

 private:
  ServingCertificate(std::vector<Certificate> chain, PrivateKey key,
                     std::vector<Certificate> ca_bundle, std::string chain_pem, std::string key_pem,
                     std::string ca_bundle_pem);

  std::vector<Certificate> chain_;
  PrivateKey key_;
  std::vector<Certificate> ca_bundle_;
  std::string chain_pem_;
  std::string key_pem_;
  std::string ca_bundle_pem_;
};

// Where a server gets its certificate. Thread-safe; current() is called for every new connection,
// so it must be cheap.
class CertificateSource {
 public:
  using Listener = std::function<void()>;

  virtual ~CertificateSource() = default;
  // The certificate new handshakes use; nullptr until one is loaded.
  virtual std::shared_ptr<const ServingCertificate> current() const = 0;
  // Calls `listener` (on the thread that changed it, without locks held) after every change of
  // current(). Returns an id for removeListener; a listener must be removed before it dies.
  virtual std::uint64_t addListener(Listener listener) = 0;
  virtual void removeListener(std::uint64_t id) = 0;
};

// A source that holds what it is given; the building block of the other sources, and enough for
// a test or a fixed certificate.
class CertificateSlot final : public CertificateSource {
 public:
  CertificateSlot() = default;
  explicit CertificateSlot(std::shared_ptr<const ServingCertificate> initial);

  // Replaces the certificate and tells the listeners, unless it is the same as the current one
  // (ServingCertificate::sameAs). Returns whether it changed.
  bool set(std::shared_ptr<const ServingCertificate> certificate);

  std::shared_ptr<const ServingCertificate> current() const override;
  std::uint64_t addListener(Listener listener) override;
  void removeListener(std::uint64_t id) override;

 private:
  struct ListenerEntry;

  mutable std::mutex mutex_;
  std::shared_ptr<const ServingCertificate> current_;
  std::map<std::uint64_t, std::shared_ptr<ListenerEntry>> listeners_;
  std::uint64_t next_id_ = 1;
};

// A source that fills a CertificateSlot of its own (from files, from a Secret): what it loaded
// goes through store(), and current() and the listeners are the slot's.
class SlotBackedCertificateSource : public CertificateSource {
 public:
  std::shared_ptr<const ServingCertificate> current() const final { return slot_.current(); }
  std::uint64_t addListener(Listener listener) final {
    return slot_.addListener(std::move(listener));
  }
  void removeListener(std::uint64_t id) final { slot_.removeListener(id); }

 protected:
  // Makes `certificate` current and tells the listeners; false when it is the same as before.
  bool store(std::shared_ptr<const ServingCertificate> certificate) {
    return slot_.set(std::move(certificate));
  }

 private:
  CertificateSlot slot_;
};

}  // namespace shardscaler::certificates
