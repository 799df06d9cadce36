#include "config_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>
#include "shardscaler/base/expected.h"

namespace shardscaler::app::detail {
namespace {

std::string nodeDescription(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Scalar:
      return (node.Tag() == "!" ? "the quoted string " : "") + inQuotes(node.Scalar());
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      break;
  }
  return "nothing";
}

// The scalar text of `value` if it has the type `kind` wants, else a "wrong type" message.
Expected<std::string> scalarFor(Kind kind, const YAML::Node& value) {
  const char* want = kind == Kind::Bool       ? "true or false"
                     : kind == Kind::Int      ? "a number"
                     : kind == Kind::Duration ? "a duration such as 10s"
                                              : "a string";
  // A quoted "true" or "3" is a string in YAML; accepting it would hide a typing mistake.
  const bool quoted = value.IsScalar() && value.Tag() == "!";
  if (!value.IsScalar() || (quoted && (kind == Kind::Bool || kind == Kind::Int))) {
    return fail(std::string("expected ") + want + ", got " + nodeDescription(value));
  }
  return value.Scalar();
}

std::string lineOf(const YAML::Node& node) {
  return "line " + std::to_string(node.Mark().line + 1);
}

// One value, checked on a scratch copy: the command line decides later whether it is used.
Applied check(const RunSpec& spec, std::string_view value) {
  RunOptions scratch;
  return spec.target.set(scratch, value);
}

Expected<std::vector<std::string>> valuesOf(const RunSpec& spec, const YAML::Node& key,
                                            const YAML::Node& value) {
  // A missing value has the position of whatever follows it; the key's line is the one to fix.
  const std::string where = lineOf(value.IsNull() ? key : value) + ": " + key.Scalar() + ": ";
  std::vector<std::string> out;
  if (spec.target.kind != Kind::List) {
    auto text = scalarFor(spec.target.kind, value);
    if (!text) return fail(where + text.error());
    if (auto ok = check(spec, *text); !ok) return fail(where + ok.error());
    out.push_back(*text);
    return out;
  }
  if (!value.IsSequence()) return fail(where + "expected a list, got " + nodeDescription(value));
  for (const auto& item : value) {
    const std::string item_where = lineOf(item) + ": " + key.Scalar() + ": ";
    auto text = scalarFor(Kind::String, item);
    if (!text) return fail(item_where + text.error());
    if (auto ok = check(spec, *text); !ok) return fail(item_where + ok.error());
    out.push_back(*text);
  }
  return out;
}

Expected<std::vector<ConfigValue>> readMapping(const YAML::Node& root,
                                               const std::vector<RunSpec>& specs) {
  std::vector<ConfigValue> out;
  if (root.IsNull()) return out;  // an empty file sets nothing
  if (!root.IsMap()) {
    return fail(lineOf(root) + ": expected a mapping of option names to values, got " +
                nodeDescription(root));
  }
  std::vector<std::string> keys;
  for (const auto& s : specs) {
    if (!s.yaml_key.empty()) keys.emplace_back(s.yaml_key);
  }
  std::set<std::string> seen;
  for (const auto& entry : root) {
    const YAML::Node& key = entry.first;
    if (!key.IsScalar()) return fail(lineOf(key) + ": keys must be option names");
    const std::string& name = key.Scalar();
    const auto spec = std::ranges::find_if(
        specs, [&](const RunSpec& s) { return !s.yaml_key.empty() && s.yaml_key == name; });
    if (spec == specs.end()) {
      return fail(lineOf(key) + ": unknown key " + inQuotes(name) + suggestion(name, keys));
    }
    if (!seen.insert(name).second) return fail(lineOf(key) + ": duplicate key " + inQuotes(name));
    auto values = valuesOf(*spec, key, entry.second);
    if (!values) return std::unexpected(values.error());
    out.push_back({&*spec, std::move(*values)});
  }
  return out;
}

}  // namespace

Expected<std::vector<ConfigValue>> readConfigFile(const std::string& path,
                                                  const std::vector<RunSpec>& specs) {
  const std::string prefix = "config file " + path + ": ";
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return fail(prefix + "is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(prefix + std::strerror(errno));
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return fail(prefix + "cannot read: " + std::strerror(errno));
  return readConfigText(buffer.str(), path, specs);
}

Expected<std::vector<ConfigValue>> readConfigText(std::string_view text, const std::string& path,
                                                  const std::vector<RunSpec>& specs) {
  const std::string prefix = "config file " + path + ": ";
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) return fail(prefix + e.msg);
    return fail(prefix + "line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  auto values = readMapping(root, specs);
  if (!values) return fail(prefix + values.error());
  return values;
}

}  // namespace shardscaler::app::detail
