#include "shardscaler/certificates/file_certificate_source.h"

#include <fstream>
#include <sstream>

#include "periodic_task.h"
#include "shardscaler/base/expected.h"
#include "shardscaler/base/log.h"
#include "shardscaler/k8s_client/meta_time.h"

namespace shardscaler::certificates {
namespace {

constexpr std::size_t kMaxFileBytes = std::size_t{1024} * 1024;

Expected<std::string> readSmallFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected(path.string() + ": cannot be read");
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return std::unexpected(path.string() + ": read failed");
  std::string text = contents.str();
  if (text.size() > kMaxFileBytes) return std::unexpected(path.string() + ": larger than 1 MiB");
  return text;
}

}  // namespace

FileCertificateSource::FileCertificateSource(std::shared_ptr<const k8s::Clock> clock,
                                             FileCertificateSourceOptions options)
    : clock_(std::move(clock)), options_(std::move(options)) {
  task_ = std::make_unique<detail::PeriodicTask>(clock_, [this]() -> std::chrono::nanoseconds {
    (void)reload();
    return options_.poll_period;
  });
}

FileCertificateSource::~FileCertificateSource() { stop(); }

void FileCertificateSource::start() { task_->start(); }

void FileCertificateSource::stop() { task_->stop(); }

Expected<void> FileCertificateSource::reload() {
  std::lock_guard lock(reload_mutex_);
  const auto fail = [&](const std::string& why) -> Expected<void> {
    if (why != last_error_) {
      base::logEvent(base::LogLevel::Warn,
                     "certificate files unusable; keeping the last certificate",
                     {{"reason", "certificate_files_unusable"},
                      {"directory", options_.directory.string()},
                      {"error", why}});
      if (options_.degraded) options_.degraded("certificate_files_unusable");
      last_error_ = why;
    }
    return std::unexpected(why);
  };
  const auto& dir = options_.directory;
  auto chain = readSmallFile(dir / options_.certificate_file);
  if (!chain) return fail(chain.error());
  auto key = readSmallFile(dir / options_.key_file);
  if (!key) return fail(key.error());
  std::string bundle;
  if (std::error_code ec; std::filesystem::exists(dir / options_.ca_file, ec)) {
    auto read = readSmallFile(dir / options_.ca_file);
    if (!read) return fail(read.error());
    bundle = std::move(*read);
  }
  auto certificate = ServingCertificate::fromPem(std::move(*chain), std::move(*key), bundle);
  if (!certificate) {
    // Name the file at fault: fromPem says which part it is.
    const std::string& why = certificate.error();
    std::string file = options_.certificate_file;
    if (why.starts_with("key")) file = options_.key_file;
    if (why.starts_with("CA bundle")) file = options_.ca_file;
    if (why.starts_with("the key does not belong")) {
      return fail((dir / options_.key_file).string() + " does not belong to " +
                  (dir / options_.certificate_file).string());
    }
    return fail((dir / file).string() + ": " + why);
  }
  last_error_.clear();
  if (store(*certificate)) {
    base::logEvent(base::LogLevel::Info, "serving certificate loaded",
                   {{"directory", dir.string()},
                    {"subject", (*certificate)->leaf().subjectCommonName()},
                    {"not_after", k8s::formatTime((*certificate)->leaf().notAfter())}});
  }
  return {};
}

}  // namespace shardscaler::certificates
