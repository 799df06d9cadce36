// Test helpers for deploy/: render a kustomization with `kubectl kustomize`, read YAML as JSON,
// and look objects up in a rendering. They assert nothing; they never write outside a temp dir.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace shardscaler::deploy_test {

using Json = nlohmann::json;

struct CommandResult {
  int exit_code = -1;  // -1: could not start or killed by a signal
  std::string out;
  std::string err;
};
// Runs argv[0] (looked up in PATH) with the given arguments, no shell.
CommandResult runCommand(const std::vector<std::string>& argv);

std::filesystem::path sourceDir();
std::filesystem::path deployDir();
std::filesystem::path goldenDir();  // tests/golden/deploy
std::filesystem::path shardscalerBinary();
std::string readFile(const std::filesystem::path& path);

// Every YAML document of `text` as JSON (null documents dropped). Plain scalars become numbers,
// booleans and null as YAML 1.2 reads them; quoted ones stay strings. Throws on a syntax error.
std::vector<Json> yamlDocuments(const std::string& text);

// Folders under deploy/ holding a kustomization of kind Kustomization (not Component), relative
// to deploy/, sorted: "base", "crds", "overlays/namespaced", ...
std::vector<std::string> kustomizationDirs();

struct Rendering {
  std::string text;  // kubectl kustomize's output
  std::vector<Json> objects;
};
// `kubectl kustomize deploy/<dir>`, cached per process; throws with kubectl's stderr on failure.
const Rendering& render(const std::string& dir);

// The first object of that kind and name (any namespace), or nullopt.
std::optional<Json> find(const std::vector<Json>& objects, const std::string& kind,
                         const std::string& name);
std::vector<Json> ofKind(const std::vector<Json>& objects, const std::string& kind);

// The rendering as it is kept in a golden file: the ShardSet CRD (the lead's deploy/crds file,
// compared by content in its own test) is replaced by a one-line comment, so its edits do not
// churn every golden file.
std::string goldenText(const Rendering& rendering);

}  // namespace shardscaler::deploy_test
