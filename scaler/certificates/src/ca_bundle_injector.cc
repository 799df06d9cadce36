#include "shardscaler/certificates/ca_bundle_injector.h"

#include "periodic_task.h"
#include "shardscaler/base/expected.h"
#include "shardscaler/base/log.h"
#include "shardscaler/k8s_client/base64.h"

namespace shardscaler::certificates {
namespace {

constexpr int kAttempts = 5;

struct Field {
  std::string pointer;     // concrete, no wildcard
  const k8s::Json* value;  // nullptr when the field is absent
};

std::string escapeToken(const std::string& token) {
  std::string escaped;
  for (const char c : token) {
    if (c == '~') {
      escaped += "~0";
    } else if (c == '/') {
      escaped += "~1";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

Expected<std::vector<std::string>> splitPointer(const std::string& pointer) {
  if (pointer.empty() || pointer.front() != '/') {
    return std::unexpected("\"" + pointer + "\" is not a JSON pointer (it must start with '/')");
  }
  std::vector<std::string> tokens;
  std::string token;
  for (std::size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      tokens.push_back(token);
      token.clear();
    } else if (pointer[i] == '~' && i + 1 < pointer.size() &&
               (pointer[i + 1] == '0' || pointer[i + 1] == '1')) {
      token += pointer[++i] == '0' ? '~' : '/';
    } else {
      token += pointer[i];
    }
  }
  if (tokens.back() == "*") return std::unexpected("\"" + pointer + "\" ends in a wildcard");
  return tokens;
}

// Every concrete field `tokens` (from `index` on) names under `node`.
Expected<void> expand(const k8s::Json& node, const std::vector<std::string>& tokens,
                      std::size_t index, const std::string& prefix, std::vector<Field>& fields) {
  const std::string& token = tokens[index];
  if (token == "*") {
    if (!node.is_array()) return std::unexpected(prefix + " is not an array");
    for (std::size_t i = 0; i < node.size(); ++i) {
      auto ok = expand(node[i], tokens, index + 1, prefix + "/" + std::to_string(i), fields);
      if (!ok) return ok;
    }
    return {};
  }
  if (!node.is_object())
    return std::unexpected((prefix.empty() ? "/" : prefix) + " is not an object");
  const std::string path = prefix + "/" + escapeToken(token);
  const auto child = node.find(token);
  if (index + 1 == tokens.size()) {
    fields.push_back({path, child == node.end() ? nullptr : &*child});
    return {};
  }
  if (child == node.end()) return std::unexpected(path + " is missing");
  return expand(*child, tokens, index + 1, path, fields);
}

}  // namespace

std::string CaBundleTarget::describe() const { return resource.describe() + " " + name; }

CaBundleTarget CaBundleTarget::validatingWebhookConfiguration(std::string name) {
  return {{"admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", false},
          std::move(name),
          {"/webhooks/*/clientConfig/caBundle"}};
}

CaBundleTarget CaBundleTarget::mutatingWebhookConfiguration(std::string name) {
  return {{"admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", false},
          std::move(name),
          {"/webhooks/*/clientConfig/caBundle"}};
}

CaBundleTarget CaBundleTarget::apiService(std::string name, std::string service_namespace,
                                          std::string service_name) {
  CaBundleTarget target{
      {"apiregistration.k8s.io", "v1", "apiservices", false}, std::move(name), {"/spec/caBundle"}};
  if (!service_name.empty()) {
    target.required = {{"/spec/service/namespace", std::move(service_namespace)},
                       {"/spec/service/name", std::move(service_name)}};
  }
  return target;
}

std::optional<std::string> foreignTarget(const k8s::Json& object, const CaBundleTarget& target) {
  for (const auto& [pointer, wanted] : target.required) {
    std::string found = "nothing";
    try {
      const auto& value = object.at(k8s::Json::json_pointer(pointer));
      if (value.is_string() && value.get_ref<const std::string&>() == wanted) continue;
      found = "\"" + (value.is_string() ? value.get<std::string>() : value.dump()) + "\"";
    } catch (const k8s::Json::exception&) {
      // Absent (or not a valid pointer into this object): not ours either.
    }
    std::string why = target.describe();
    why.append(" has ").append(found).append(" at ").append(pointer);
    why.append(", not \"").append(wanted);
    why.append("\": its caBundle belongs to another server and is left alone");
    return why;
  }
  return std::nullopt;
}

Expected<std::optional<k8s::Json>> caBundlePatch(const k8s::Json& object,
                                                 const CaBundleTarget& target,
                                                 const std::string& bundle_base64) {
  std::vector<Field> fields;
  for (const auto& pointer : target.paths) {
    auto tokens = splitPointer(pointer);
    if (!tokens) return std::unexpected(tokens.error());
    if (auto ok = expand(object, *tokens, 0, "", fields); !ok) {
      return std::unexpected(target.describe() + ": " + ok.error());
    }
  }
  const auto rv = object.find("metadata") != object.end()
                      ? object["metadata"].value("resourceVersion", std::string())
                      : std::string();
  // "replace" of the resourceVersion, not a "test" op: the server then checks it as an update
  // precondition and answers 409 Conflict, where a failed "test" would be a 422 like any bad patch.
  k8s::Json patch =
      k8s::Json::array({{{"op", "replace"}, {"path", "/metadata/resourceVersion"}, {"value", rv}}});
  for (const auto& field : fields) {
    if (field.value != nullptr && field.value->is_string() &&
        field.value->get_ref<const std::string&>() == bundle_base64) {
      continue;
    }
    patch.push_back({{"op", "add"}, {"path", field.pointer}, {"value", bundle_base64}});
  }
  if (patch.size() == 1) return std::optional<k8s::Json>();
  if (rv.empty()) return std::unexpected(target.describe() + " has no resourceVersion");
  return std::optional<k8s::Json>(std::move(patch));
}

CaBundleInjector::CaBundleInjector(k8s::KubeClient& client,
                                   std::shared_ptr<CertificateSource> source,
                                   std::shared_ptr<const k8s::Clock> clock,
                                   CaBundleInjectorOptions options)
    : client_(client),
      source_(std::move(source)),
      clock_(std::move(clock)),
      options_(std::move(options)) {
  task_ = std::make_unique<detail::PeriodicTask>(clock_, [this]() -> std::chrono::nanoseconds {
    return injectOnce() ? options_.resync_period : options_.retry_period;
  });
}

CaBundleInjector::~CaBundleInjector() { stop(); }

void CaBundleInjector::start() {
  if (!listener_) listener_ = source_->addListener([this] { task_->wake(); });
  task_->start();
}

void CaBundleInjector::stop() {
  if (listener_) {
    source_->removeListener(*listener_);
    listener_.reset();
  }
  task_->stop();
}

void CaBundleInjector::degraded(std::string_view reason, const std::string& detail) const {
  base::logEvent(base::LogLevel::Warn, "caBundle injection degraded",
                 {{"reason", reason}, {"error", detail}});
  if (options_.degraded) options_.degraded(reason);
}

Expected<int> CaBundleInjector::injectOnce() {
  const auto certificate = source_->current();
  if (!certificate || certificate->caBundle().empty()) {
    const std::string why =
        certificate ? "the certificate source publishes no CA bundle" : "no certificate loaded yet";
    degraded("ca_bundle_unavailable", why);
    return std::unexpected(why);
  }
  const std::string bundle = k8s::base64Encode(certificate->caBundlePem());
  int written = 0;
  std::string errors;
  for (const auto& target : options_.targets) {
    auto result = injectInto(target, bundle);
    if (!result) {
      errors += (errors.empty() ? "" : "; ") + result.error();
    } else if (*result) {
      ++written;
    }
  }
  if (!errors.empty()) return std::unexpected(errors);
  return written;
}

Expected<bool> CaBundleInjector::injectInto(const CaBundleTarget& target,
                                            const std::string& bundle_base64) {
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    auto object = client_.get(target.resource, "", target.name);
    if (!object) {
      const bool missing = object.error().is(k8s::ErrorKind::NotFound);
      const std::string why = target.describe() + ": " + object.error().describe();
      degraded(missing ? "ca_bundle_target_missing" : "ca_bundle_read_failed", why);
      return std::unexpected(why);
    }
    if (auto foreign = foreignTarget(*object, target)) {
      std::lock_guard lock(foreign_mutex_);
      std::string& last = foreign_[target.describe()];
      if (last != *foreign) degraded("ca_bundle_target_foreign", *foreign);
      last = *foreign;
      return false;
    }
    {
      std::lock_guard lock(foreign_mutex_);
      foreign_.erase(target.describe());
    }
    auto patch = caBundlePatch(*object, target, bundle_base64);
    if (!patch) {
      degraded("ca_bundle_write_failed", patch.error());
      return std::unexpected(patch.error());
    }
    if (!*patch) return false;
    auto patched = client_.patch(target.resource, "", target.name, k8s::PatchType::Json, **patch);
    if (patched) {
      base::logEvent(base::LogLevel::Info, "caBundle injected",
                     {{"target", target.describe()}, {"fields", (*patch)->size() - 1}});
      return true;
    }
    if (patched.error().is(k8s::ErrorKind::Conflict)) continue;  // changed since read: re-read
    const std::string why = target.describe() + ": " + patched.error().describe();
    degraded("ca_bundle_write_failed", why);
    return std::unexpected(why);
  }
  const std::string why =
      target.describe() + ": " + std::to_string(kAttempts) + " conflicting writes in a row";
  degraded("ca_bundle_write_failed", why);
  return std::unexpected(why);
}

}  // namespace shardscaler::certificates
