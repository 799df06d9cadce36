#include "tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <cstring>

#include "shardscaler/base/expected.h"
#include "shardscaler/certificates/openssl_handles.h"

namespace shardscaler::serving::detail {
namespace {

namespace ssl = boost::asio::ssl;

// TLS 1.2 suites with forward secrecy and AEAD; TLS 1.3 keeps OpenSSL's (all AEAD) suites.
constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

// Sessions of one context resume only there (each certificate gets a context of its own).
constexpr unsigned char kSessionIdContext[] = "shardscaler-https";

// Only HTTP/1.1 is served: a client that offers h2 and http/1.1 (Go's) is told http/1.1; one
// that offers no http/1.1 gets no ALPN answer and may still speak HTTP/1.1.
int selectAlpn(SSL*, const unsigned char** out, unsigned char* out_length, const unsigned char* in,
               unsigned int in_length, void*) {
  static constexpr unsigned char kHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, out_length, kHttp11, sizeof kHttp11, in, in_length) !=
      OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_NOACK;
  }
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

Expected<void> useCertificate(SSL_CTX* native,
                              const certificates::ServingCertificate& certificate) {
  if (SSL_CTX_use_certificate(native, certificate.leaf().native()) != 1) {
    return std::unexpected(certificates::opensslError("use certificate"));
  }
  for (std::size_t i = 1; i < certificate.chain().size(); ++i) {
    if (SSL_CTX_add1_chain_cert(native, certificate.chain()[i].native()) != 1) {
      return std::unexpected(certificates::opensslError("add chain certificate"));
    }
  }
  if (SSL_CTX_use_PrivateKey(native, certificate.key().native()) != 1 ||
      SSL_CTX_check_private_key(native) != 1) {
    return std::unexpected(certificates::opensslError("use private key"));
  }
  return {};
}

int acceptAnyChain(int /*preverify_ok*/, X509_STORE_CTX* /*context*/) { return 1; }

Expected<void> trustClients(SSL_CTX* native, ClientCertificateMode mode,
                            const certificates::TrustBundle* trust) {
  if (mode == ClientCertificateMode::None) {
    SSL_CTX_set_verify(native, SSL_VERIFY_NONE, nullptr);
    return {};
  }
  // An empty store when no bundle is loaded yet: any presented certificate then fails, never
  // passes.
  X509_STORE* store = X509_STORE_new();
  if (store == nullptr) return std::unexpected(certificates::opensslError("client trust store"));
  SSL_CTX_set_cert_store(native, store);
  if (trust != nullptr) {
    for (const auto& ca : trust->certificates()) {
      if (X509_STORE_add_cert(store, ca.native()) != 1 ||
          SSL_CTX_add_client_CA(native, ca.native()) != 1) {
        return std::unexpected(
            certificates::opensslError("trust client CA \"" + ca.subjectCommonName() + "\""));
      }
    }
  }
  int flags = SSL_VERIFY_PEER;
  if (mode == ClientCertificateMode::Require) flags |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
  // Request: the chain is still verified (SSL_get_verify_result keeps the outcome, which the
  // session reads), but a failure does not end the handshake.
  SSL_CTX_set_verify(native, flags,
                     mode == ClientCertificateMode::Request ? acceptAnyChain : nullptr);
  return {};
}

Expected<std::shared_ptr<ssl::context>> makeServerTlsContext(
    const certificates::ServingCertificate& certificate, ClientCertificateMode mode,
    const certificates::TrustBundle* trust) {
  ERR_clear_error();
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = context->native_handle();
  if (SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) != 1 ||
      SSL_CTX_set_cipher_list(native, kTls12Ciphers) != 1) {
    return std::unexpected(certificates::opensslError("TLS settings"));
  }
  SSL_CTX_set_options(
      native, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  // A server that asks for client certificates resumes a TLS 1.2 session only under a session id
  // context; without one OpenSSL ends the resumed handshake with a fatal alert.
  if (SSL_CTX_set_session_id_context(native, kSessionIdContext, sizeof kSessionIdContext) != 1) {
    return std::unexpected(certificates::opensslError("session id context"));
  }
  // An idle connection keeps no read or write buffer of its own.
  SSL_CTX_set_mode(native, SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_alpn_select_cb(native, selectAlpn, nullptr);
  if (auto ok = useCertificate(native, certificate); !ok) return std::unexpected(ok.error());
  if (auto ok = trustClients(native, mode, trust); !ok) return std::unexpected(ok.error());
  return context;
}

}  // namespace

Expected<std::shared_ptr<ssl::context>> TlsContextCache::current(bool* rebuilt) {
  *rebuilt = false;
  auto certificate = certificates_ ? certificates_->current() : nullptr;
  if (!certificate) return std::unexpected("no serving certificate loaded yet");
  auto trust = trust_slot_ ? trust_slot_->current() : nullptr;
  if (certificate == certificate_ && trust == trust_) return context_;
  // A certificate that cannot be used is remembered too, so it is reported once, not per
  // connection.
  context_ = makeServerTlsContext(*certificate, mode_, trust.get());
  certificate_ = std::move(certificate);
  trust_ = std::move(trust);
  *rebuilt = true;
  return context_;
}

}  // namespace shardscaler::serving::detail
