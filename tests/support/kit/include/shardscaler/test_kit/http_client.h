// The tests' one HTTP(S) client (libcurl): any method, headers and body, a CA given as PEM text or
// a file, TLS client certificates, a TLS version range, and what the TLS handshake showed (the
// server's certificate, the protocol version). httpGet (http_get.h) is its GET for probes. For
// loopback test servers only: it never retries, never throws and never goes through a proxy.
#pragma once

#include <curl/curl.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace shardscaler::test_kit {

struct ClientRequest {
  std::string url;
  std::string method = "GET";
  std::string body;                  // sent when not empty, or always for POST
  std::vector<std::string> headers;  // "Name: value"
  std::chrono::milliseconds timeout{10000};
  // An https server is verified against ca_pem (the only CA trusted), else ca_file. With neither,
  // its certificate is not verified: the servers tests start on 127.0.0.1 are self-signed.
  std::string ca_pem;
  std::filesystem::path ca_file;
  std::string client_certificate_pem;  // with client_key_pem: a TLS client certificate
  std::string client_key_pem;
  std::string bearer_token;                                         // Authorization: Bearer
  std::optional<std::pair<std::string, std::string>> basic_auth{};  // user, password
  // CURLOPT_SSLVERSION, e.g. CURL_SSLVERSION_TLSv1_2 | CURL_SSLVERSION_MAX_TLSv1_2.
  long ssl_version = CURL_SSLVERSION_DEFAULT;
};

struct ClientReply {
  CURLcode code = CURLE_OK;
  long status = 0;  // 0 when no response arrived
  std::string body;
  std::string error;                   // libcurl's message when code != CURLE_OK
  std::string server_certificate_pem;  // the certificate an https server presented
  std::string tls_version;             // e.g. "TLSv1.3"; empty over plain HTTP
  // The TLS session was resumed (an HttpClient keeps sessions between connections).
  bool tls_session_reused = false;
};

// One libcurl handle: consecutive perform() calls reuse the connection when the server keeps it
// open. One thread at a time.
class HttpClient {
 public:
  HttpClient();
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  ClientReply perform(const ClientRequest& request);

 private:
  struct Deleter {
    void operator()(CURL* curl) const;
  };
  std::unique_ptr<CURL, Deleter> curl_;
};

// One request on a connection of its own.
ClientReply requestOnce(const ClientRequest& request);

}  // namespace shardscaler::test_kit
