#include "file_contents.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace shardscaler::k8s::detail {

Result<std::string> readFileContents(const std::filesystem::path& path, std::string_view what) {
  auto fail = [&](int err) {
    return makeError(ErrorKind::Config, "cannot read " + std::string(what) + " \"" + path.string() +
                                            "\": " + std::strerror(err));
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(errno);
  std::string contents;
  char buffer[8192];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return fail(err);
    }
    contents.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return contents;
}

}  // namespace shardscaler::k8s::detail
