// What a process has used so far, read from /proc: CPU-seconds (user + system, all threads),
// resident memory now and at its peak. Benchmarks only; it never changes the process.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace shardscaler::bench {

struct ProcessUsage {
  double cpu_seconds = 0;   // utime + stime
  double rss_mib = 0;       // VmRSS
  double peak_rss_mib = 0;  // VmHWM: the highest VmRSS since the process started
};

inline ProcessUsage readProcessUsage(pid_t pid) {
  ProcessUsage usage;
  const std::string dir = "/proc/" + std::to_string(pid);
  {
    std::ifstream in(dir + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // Fields after the command name, which may hold spaces, start after the last ')'.
    const auto close = text.rfind(')');
    if (close != std::string::npos) {
      std::istringstream fields(text.substr(close + 2));
      std::string field;
      unsigned long long utime = 0;
      unsigned long long stime = 0;
      // state(3) ... utime is field 14 and stime 15 of the whole line: 11th and 12th here.
      for (int i = 3; i <= 15 && fields >> field; ++i) {
        if (i == 14) utime = std::stoull(field);
        if (i == 15) stime = std::stoull(field);
      }
      usage.cpu_seconds =
          static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
    }
  }
  std::ifstream status(dir + "/status");
  std::string line;
  while (std::getline(status, line)) {
    auto kib = [&](const char* key) {
      return line.starts_with(key) ? std::stod(line.substr(std::string(key).size())) / 1024.0
                                   : -1.0;
    };
    if (double v = kib("VmRSS:"); v >= 0) usage.rss_mib = v;
    if (double v = kib("VmHWM:"); v >= 0) usage.peak_rss_mib = v;
  }
  return usage;
}

}  // namespace shardscaler::bench
