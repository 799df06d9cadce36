#include "shardscaler/test_kit/temp_dir.h"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace shardscaler::test_kit {

TempDir::TempDir(std::string_view prefix, const std::filesystem::path& parent) {
  std::filesystem::create_directories(parent);
  std::string pattern = (parent / (std::string(prefix) + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
  }
  path_ = pattern;
}

TempDir::~TempDir() { removeNow(); }

TempDir::TempDir(TempDir&& other) noexcept
    : path_(std::exchange(other.path_, {})), keep_(other.keep_) {}

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    removeNow();
    path_ = std::exchange(other.path_, {});
    keep_ = other.keep_;
  }
  return *this;
}

std::filesystem::path TempDir::write(const std::string& name, std::string_view contents) const {
  auto file = path_ / name;
  std::filesystem::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.close();
  if (!out) throw std::runtime_error("cannot write " + file.string());
  return file;
}

void TempDir::removeNow() noexcept {
  if (path_.empty() || keep_) return;
  std::error_code ec;  // best effort in a destructor: a leftover dir is not worth a crash
  std::filesystem::remove_all(path_, ec);
  path_.clear();
}

}  // namespace shardscaler::test_kit
