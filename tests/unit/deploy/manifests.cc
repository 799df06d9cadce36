#include "manifests.h"

#include "yaml_json.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace shardscaler::deploy_test {
namespace {

// A fresh directory for one command's output files, removed when it goes out of scope.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "deploy-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// kubectl kustomize separates documents with a line "---".
std::vector<std::string> splitDocuments(const std::string& text) {
  std::vector<std::string> docs(1);
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line == "---") {
      docs.emplace_back();
    } else {
      docs.back() += line + "\n";
    }
  }
  return docs;
}

}  // namespace

CommandResult runCommand(const std::vector<std::string>& argv) {
  TempDir dir;
  const std::string out_path = (dir.path() / "out").string();
  const std::string err_path = (dir.path() / "err").string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  CommandResult result;
  if (spawned != 0) {
    result.err = "cannot start " + argv[0] + ": " + std::strerror(spawned);
    return result;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = readFile(out_path);
  result.err = readFile(err_path);
  return result;
}

std::filesystem::path sourceDir() { return SHARDSCALER_SOURCE_DIR; }
std::filesystem::path deployDir() { return sourceDir() / "deploy"; }
std::filesystem::path goldenDir() { return sourceDir() / "tests" / "golden" / "deploy"; }
std::filesystem::path shardscalerBinary() { return SHARDSCALER_BINARY; }

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<Json> yamlDocuments(const std::string& text) { return yamlStreamToJson(text); }

std::vector<std::string> kustomizationDirs() {
  static const std::vector<std::string> kNames = {"kustomization.yaml", "kustomization.yml",
                                                  "Kustomization"};
  std::vector<std::string> dirs;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(deployDir())) {
    if (!entry.is_regular_file()) continue;
    const std::string name = entry.path().filename().string();
    if (std::ranges::find(kNames, name) == kNames.end()) continue;
    const auto docs = yamlDocuments(readFile(entry.path()));
    if (docs.empty() || docs[0].value("kind", "Kustomization") != "Kustomization") continue;
    dirs.push_back(
        std::filesystem::relative(entry.path().parent_path(), deployDir()).generic_string());
  }
  std::ranges::sort(dirs);
  return dirs;
}

const Rendering& render(const std::string& dir) {
  static std::mutex mutex;
  static std::map<std::string, Rendering> cache;
  std::lock_guard lock(mutex);
  if (auto it = cache.find(dir); it != cache.end()) return it->second;
  auto result = runCommand({"kubectl", "kustomize", (deployDir() / dir).string()});
  if (result.exit_code != 0) {
    throw std::runtime_error("kubectl kustomize deploy/" + dir + " failed (exit " +
                             std::to_string(result.exit_code) + "): " + result.err);
  }
  Rendering rendering{result.out, yamlDocuments(result.out)};
  return cache.emplace(dir, std::move(rendering)).first->second;
}

std::optional<Json> find(const std::vector<Json>& objects, const std::string& kind,
                         const std::string& name) {
  for (const Json& o : objects) {
    if (o.value("kind", "") == kind && o["metadata"].value("name", "") == name) return o;
  }
  return std::nullopt;
}

std::vector<Json> ofKind(const std::vector<Json>& objects, const std::string& kind) {
  std::vector<Json> out;
  for (const Json& o : objects) {
    if (o.value("kind", "") == kind) out.push_back(o);
  }
  return out;
}

std::string goldenText(const Rendering& rendering) {
  std::string out;
  bool first = true;
  for (const std::string& doc : splitDocuments(rendering.text)) {
    if (!first) out += "---\n";
    first = false;
    const auto parsed = yamlDocuments(doc);
    if (parsed.size() == 1 && parsed[0].value("kind", "") == "CustomResourceDefinition" &&
        parsed[0]["metadata"].value("name", "") == "shardsets.shardscaler.io") {
      out +=
          "# CustomResourceDefinition shardsets.shardscaler.io from deploy/crds (compared in "
          "CrdTest, not here)\n";
    } else {
      out += doc;
    }
  }
  return out;
}

}  // namespace shardscaler::deploy_test
