// libFuzzer target: kubeconfig files, which users hand-edit and tools generate. The files a
// kubeconfig names resolve against an empty directory, so the target reads nothing else by
// relative path.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "shardscaler/k8s_client/kube_config.h"
#include "shardscaler/test_kit/temp_dir.h"

namespace {

const std::filesystem::path& emptyDir() {
  static const shardscaler::test_kit::TempDir dir("kubeconfig-fuzz-");
  return dir.path();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)shardscaler::k8s::parseKubeconfig(text, "fuzz input", emptyDir());
  return 0;
}
