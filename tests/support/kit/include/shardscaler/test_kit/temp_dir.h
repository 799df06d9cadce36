// A fresh private directory for one test or one test server, removed with everything in it when
// the owner goes away. Never removes anything it did not create (keep() leaves it for a
// post-mortem).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace shardscaler::test_kit {

class TempDir {
 public:
  // Creates <parent>/<prefix>XXXXXX with mode 0700 (mkdtemp); throws std::system_error naming
  // the pattern when it cannot. The parent is created if missing.
  explicit TempDir(std::string_view prefix,
                   const std::filesystem::path& parent = std::filesystem::temp_directory_path());
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&& other) noexcept;

  const std::filesystem::path& path() const { return path_; }
  // Writes `contents` to path()/name (creating subdirectories) and returns the file's path.
  std::filesystem::path write(const std::string& name, std::string_view contents) const;
  // Leaves the directory on disk when this object goes away (e.g. logs of a failed test).
  void keep() { keep_ = true; }

 private:
  void removeNow() noexcept;

  std::filesystem::path path_;
  bool keep_ = false;
};

}  // namespace shardscaler::test_kit
