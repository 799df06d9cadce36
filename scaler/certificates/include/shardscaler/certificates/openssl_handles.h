// Owning handles for OpenSSL objects and OpenSSL's error queue turned into a message.
// Shared by the certificates and the TLS contexts of serving; nothing here ever prints key
// material.
#pragma once

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <string>
#include <string_view>

namespace shardscaler::certificates {

template <auto Free>
struct OpenSslFree {
  template <typename T>
  void operator()(T* p) const {
    Free(p);
  }
};

using BioPtr = std::unique_ptr<BIO, OpenSslFree<BIO_free_all>>;
using X509Ptr = std::unique_ptr<X509, OpenSslFree<X509_free>>;
using KeyPtr = std::unique_ptr<EVP_PKEY, OpenSslFree<EVP_PKEY_free>>;
using GeneralNamesPtr = std::unique_ptr<GENERAL_NAMES, OpenSslFree<GENERAL_NAMES_free>>;
using ExtensionPtr = std::unique_ptr<X509_EXTENSION, OpenSslFree<X509_EXTENSION_free>>;

// `what`, then OpenSSL's queued reasons ("what: reason; reason"); empties the queue.
std::string opensslError(std::string_view what);

// A read-only memory BIO over `data` (which must outlive it).
BioPtr memoryBio(std::string_view data);
// Everything written into a memory BIO.
std::string bioContents(BIO* bio);

}  // namespace shardscaler::certificates
