// The serving certificate read from files (a Secret mounted by the kubelet, kept by cert-manager),
// re-read when they change. It never writes anything: in this mode cert-manager issues and its CA
// injector publishes the caBundle.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "shardscaler/base/expected.h"
#include "shardscaler/certificates/certificate_source.h"
#include "shardscaler/k8s_client/clock.h"

namespace shardscaler::certificates {

namespace detail {
class PeriodicTask;
}

struct FileCertificateSourceOptions {
  std::filesystem::path directory;
  std::string certificate_file = "tls.crt";
  std::string key_file = "tls.key";
  std::string ca_file = "ca.crt";  // optional: read when present
  // The files are re-read this often; a mounted Secret changes by a symlink swap, which no
  // modification time of the files shows reliably, so the contents are compared.
  std::chrono::nanoseconds poll_period = std::chrono::seconds(10);
  // Told of each degraded path after its warning is logged: "certificate_files_unusable".
  std::function<void(std::string_view reason)> degraded;
};

class FileCertificateSource final : public SlotBackedCertificateSource {
 public:
  FileCertificateSource(std::shared_ptr<const k8s::Clock> clock,
                        FileCertificateSourceOptions options);
  ~FileCertificateSource() override;  // stop()
  FileCertificateSource(const FileCertificateSource&) = delete;
  FileCertificateSource& operator=(const FileCertificateSource&) = delete;

  // Reads the files now. A certificate and key that do not parse or do not belong together (say,
  // read halfway through an update) are an error naming the file; the last good ones stay.
  Expected<void> reload();

  // Reloads every poll_period on a background thread until stop().
  void start();
  void stop();

 private:
  std::shared_ptr<const k8s::Clock> clock_;
  FileCertificateSourceOptions options_;
  std::mutex reload_mutex_;
  std::string last_error_;  // reported once per distinct problem
  std::unique_ptr<detail::PeriodicTask> task_;
};

}  // namespace shardscaler::certificates
