// The API fault proxy's record of every fault it injected, one JSON object per line, for a
// person reading a failed test's files. It only appends; it never reads its file back.
#pragma once

#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>

#include "request_info.h"
#include "shardscaler/testenv/api_fault_proxy.h"

namespace shardscaler::testenv::control_plane_detail {

class FaultLog {
 public:
  // Throws std::runtime_error when the file cannot be opened for appending.
  explicit FaultLog(std::filesystem::path path);

  // {"time", "fault", "verb", "method", "path", "detail"}; flushed at once, so a test that
  // crashes right after still leaves the line.
  void record(ApiFault fault, const RequestInfo& request, const std::string& method,
              const std::string& detail);

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::mutex mutex_;
  std::ofstream out_;
};

}  // namespace shardscaler::testenv::control_plane_detail
