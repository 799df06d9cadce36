#include "scrape_objects_reader.h"

#include "shardscaler/k8s_client/label_selector.h"

namespace shardscaler::controller {
namespace {

using Json = nlohmann::json;

const k8s::Resource kNamespaces{"", "v1", "namespaces", false};

k8s::Labels labelsOf(const Json& object) {
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return {};
  return k8s::labelsOf(metadata->value("labels", Json::object()));
}

std::string failure(std::string_view what, const k8s::Error& error) {
  return std::string(what) + ": " + error.describe();
}

}  // namespace

k8s::Result<std::optional<std::vector<std::string>>> ScrapeObjectsReader::namespaces(
    const Json& selector, const std::string& own) {
  if (selector.is_null()) return std::vector<std::string>{own};
  auto parsed = k8s::LabelSelector::fromObject(selector);
  if (!parsed) return k8s::makeError(k8s::ErrorKind::Invalid, parsed.error());
  if (parsed->empty()) return std::optional<std::vector<std::string>>();
  auto list = k8s::listAll(client_, kNamespaces, "");
  if (!list) return std::unexpected(list.error());
  std::vector<std::string> out;
  for (const Json& ns : (*list)["items"]) {
    if (parsed->matches(labelsOf(ns))) out.push_back(ns["metadata"].value("name", ""));
  }
  return out;
}

std::optional<std::vector<resharding::ScrapeObject>> ScrapeObjectsReader::read(
    const std::string& key, const planner::Target& target, std::string* error) {
  std::vector<resharding::ScrapeObject> out;
  for (const resharding::ScrapeSelection& selection : target.scrape.selections) {
    if (selection.selector.is_null()) continue;
    const std::string kind(resharding::toString(selection.kind));
    auto selector = k8s::LabelSelector::fromObject(selection.selector);
    if (!selector) {
      *error = kind + " selector of the target: " + selector.error();
      return std::nullopt;
    }
    auto within = namespaces(selection.namespace_selector, target.ns);
    if (!within) {
      *error = failure(kind + " namespaces", within.error());
      return std::nullopt;
    }
    const std::vector<std::string> lists = *within ? **within : std::vector<std::string>{""};
    for (const std::string& ns : lists) {
      auto list = k8s::listAll(client_, resharding::scrapeResource(selection.kind), ns);
      if (!list) {
        // No such resource: the operator's CRD for this kind is not installed, so nothing of it
        // can be selected.
        if (list.error().is(k8s::ErrorKind::NotFound)) break;
        *error = failure("listing " + kind + "s", list.error());
        return std::nullopt;
      }
      for (const Json& item : (*list)["items"]) {
        if (!selector->matches(labelsOf(item))) continue;
        out.push_back(resharding::readScrapeObject(selection.kind, item));
      }
    }
  }
  std::lock_guard lock(mutex_);
  read_at_[key] = clock_.monotonicNow();
  return out;
}

bool ScrapeObjectsReader::readWithin(const std::string& key,
                                     std::chrono::nanoseconds max_age) const {
  std::lock_guard lock(mutex_);
  auto it = read_at_.find(key);
  return it != read_at_.end() && clock_.monotonicNow() - it->second < max_age;
}

void ScrapeObjectsReader::forget(const std::string& key) {
  std::lock_guard lock(mutex_);
  read_at_.erase(key);
}

}  // namespace shardscaler::controller
