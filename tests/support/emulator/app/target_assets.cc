#include "target_assets.h"

#include "metadata_merge.h"
#include "prometheus_config.h"
#include "shard_naming.h"
#include "shardscaler/k8s_client/base64.h"
#include "shardscaler/k8s_client/label_selector.h"
#include "sync_step.h"

namespace shardscaler::emulator {

namespace {

k8s::Resource services() {
  return k8s::Resource{.group = "", .version = "v1", .resource = "services"};
}

k8s::Labels labelsOf(const Json& object) {
  return k8s::labelsOf(objectField(object, "metadata").value("labels", Json::object()));
}

}  // namespace

k8s::Result<std::string> TargetAssets::loadAdditionalScrapeConfigs(const Json& target) {
  auto ref = additionalScrapeConfigsRef(target);
  if (!ref) return std::string();
  auto secret = client_.get(k8s::resources::secrets(), namespaceOf(target), ref->name);
  if (!secret) {
    if (secret.error().is(k8s::ErrorKind::NotFound) && ref->optional) return std::string();
    return failedStep("loading additional scrape configs from Secret failed", secret.error());
  }
  const Json data = secret->value("data", Json::object());
  auto value = data.find(ref->key);
  if (value == data.end() || !value->is_string()) {
    if (ref->optional) return std::string();
    return k8s::makeError(k8s::ErrorKind::NotFound,
                          "loading additional scrape configs from Secret failed: key " + ref->key +
                              " could not be found in secret " + ref->name);
  }
  auto decoded = k8s::base64Decode(value->get<std::string>());
  if (!decoded) return k8s::makeError(k8s::ErrorKind::Decode, "invalid base64");
  return std::move(*decoded);
}

k8s::Result<std::vector<Json>> TargetAssets::selectObjects(const Json& target,
                                                           const k8s::Resource& resource,
                                                           const char* selector_field,
                                                           const char* namespace_selector_field) {
  const Json& spec = objectField(target, "spec");
  std::vector<Json> out;
  const Json selector_json = spec.value(selector_field, Json());
  if (!selector_json.is_object()) return out;
  auto selector = k8s::LabelSelector::fromObject(selector_json);
  if (!selector) return k8s::makeError(k8s::ErrorKind::Invalid, selector.error());
  const Json namespace_json = spec.value(namespace_selector_field, Json());
  std::vector<std::string> namespaces;
  if (!namespace_json.is_object()) {
    namespaces.push_back(namespaceOf(target));
  } else {
    auto ns_selector = k8s::LabelSelector::fromObject(namespace_json);
    if (!ns_selector) return k8s::makeError(k8s::ErrorKind::Invalid, ns_selector.error());
    auto all = client_.list(k8s::Resource{"", "v1", "namespaces", false}, "");
    if (!all) return std::unexpected(all.error());
    for (const Json& ns : all->value("items", Json::array())) {
      if (ns_selector->matches(labelsOf(ns))) namespaces.push_back(nameOf(ns));
    }
  }
  for (const std::string& ns : namespaces) {
    auto list = client_.list(resource, ns);
    if (!list) {
      if (list.error().is(k8s::ErrorKind::NotFound)) return out;  // the CRD is not installed
      return std::unexpected(list.error());
    }
    for (const Json& item : list->value("items", Json::array())) {
      if (selector->matches(labelsOf(item))) out.push_back(item);
    }
  }
  return out;
}

k8s::Result<ScrapeObjects> TargetAssets::loadScrapeObjects(const Json& target) {
  ScrapeObjects objects;
  auto probes = selectObjects(target, {"monitoring.coreos.com", "v1", "probes", true},
                              "probeSelector", "probeNamespaceSelector");
  if (!probes) return std::unexpected(probes.error());
  objects.probes = std::move(*probes);
  auto scrape_configs =
      selectObjects(target, {"monitoring.coreos.com", "v1alpha1", "scrapeconfigs", true},
                    "scrapeConfigSelector", "scrapeConfigNamespaceSelector");
  if (!scrape_configs) return std::unexpected(scrape_configs.error());
  objects.scrape_configs = std::move(*scrape_configs);
  return objects;
}

k8s::Result<void> TargetAssets::syncConfigSecret(const Json& target) {
  const std::string ns = namespaceOf(target);
  const std::string secret_name = configSecretName(kind_, nameOf(target));
  if (unmanagedConfiguration(kind_, target)) {
    // The user manages the configuration: create an empty Secret once, never touch it after.
    auto existing = client_.get(k8s::resources::secrets(), ns, secret_name);
    if (existing) return {};
    if (!existing.error().is(k8s::ErrorKind::NotFound)) {
      return failedStep("creating config failed", existing.error());
    }
    auto created = client_.create(k8s::resources::secrets(), ns,
                                  makeConfigSecret(kind_, target, std::string()));
    recorder_.record("create", "Secret", target, secret_name, std::nullopt,
                     "empty configuration (unmanaged)", created);
    if (!created && !created.error().is(k8s::ErrorKind::AlreadyExists)) {
      return failedStep("creating config failed", created.error());
    }
    return {};
  }

  auto additional = loadAdditionalScrapeConfigs(target);
  if (!additional) return failedStep("creating config failed", additional.error());
  auto objects = loadScrapeObjects(target);
  if (!objects) return failedStep("selecting scrape objects failed", objects.error());
  auto config = generateConfiguration(kind_, target, *additional, *objects);
  if (!config) return failedStep("creating config failed", config.error());
  const Json desired = makeConfigSecret(kind_, target, *config);

  // CreateOrUpdateSecret: the merged object never equals the server's (uid, timestamps), so
  // the operator writes it on every sync; so does the emulator.
  for (int attempt = 0; attempt < kConflictRetries; ++attempt) {
    auto existing = client_.get(k8s::resources::secrets(), ns, secret_name);
    if (!existing) {
      if (!existing.error().is(k8s::ErrorKind::NotFound)) {
        return failedStep("creating config failed", existing.error());
      }
      auto created = client_.create(k8s::resources::secrets(), ns, desired);
      recorder_.record("create", "Secret", target, secret_name, std::nullopt, "configuration",
                       created);
      if (created) return {};
      if (created.error().is(k8s::ErrorKind::AlreadyExists)) continue;
      return failedStep("creating config failed", created.error());
    }
    Json update = desired;
    mergeMetadata(update, *existing);
    auto updated = client_.update(k8s::resources::secrets(), ns, update);
    recorder_.record("update", "Secret", target, secret_name, std::nullopt, "configuration",
                     updated);
    if (updated) return {};
    if (!updated.error().is(k8s::ErrorKind::Conflict)) {
      return failedStep("creating config failed", updated.error());
    }
  }
  return k8s::makeError(k8s::ErrorKind::Conflict,
                        "creating config failed: conflicts on Secret " + secret_name);
}

k8s::Result<void> TargetAssets::syncGoverningService(const Json& target) {
  const std::string ns = namespaceOf(target);
  Json desired = makeGoverningService(kind_, target);
  for (int attempt = 0; attempt < kConflictRetries; ++attempt) {
    auto existing = client_.get(services(), ns, kind_.governing_service);
    if (!existing) {
      if (!existing.error().is(k8s::ErrorKind::NotFound)) {
        return failedStep("synchronizing default governing service failed", existing.error());
      }
      auto created = client_.create(services(), ns, desired);
      recorder_.record("create", "Service", target, kind_.governing_service, std::nullopt,
                       "governing service", created);
      if (created) return {};
      if (created.error().is(k8s::ErrorKind::AlreadyExists)) continue;
      return failedStep("synchronizing default governing service failed", created.error());
    }
    Json update = desired;
    const Json old_spec = objectField(*existing, "spec");
    for (const char* immutable : {"ipFamilies", "ipFamilyPolicy", "clusterIP", "clusterIPs"}) {
      if (auto v = old_spec.find(immutable); v != old_spec.end()) update["spec"][immutable] = *v;
    }
    update["metadata"]["ownerReferences"] = mergeOwnerReferences(
        objectField(*existing, "metadata").value("ownerReferences", Json::array()),
        desired["metadata"]["ownerReferences"]);
    mergeMetadata(update, *existing);
    auto updated = client_.update(services(), ns, update);
    recorder_.record("update", "Service", target, kind_.governing_service, std::nullopt,
                     "governing service", updated);
    if (updated) return {};
    if (!updated.error().is(k8s::ErrorKind::Conflict)) {
      return failedStep("synchronizing default governing service failed", updated.error());
    }
  }
  return k8s::makeError(k8s::ErrorKind::Conflict,
                        "synchronizing default governing service failed: conflicts");
}

}  // namespace shardscaler::emulator
