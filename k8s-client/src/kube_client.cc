#include "shardscaler/k8s_client/kube_client.h"

#include <utility>

namespace shardscaler::k8s {

Result<Json> KubeClient::patchReading(const Resource& r, const std::string& ns,
                                      const std::string& name, PatchType type, const Json& patch,
                                      const std::string& subresource, const AnswerFields& read) {
  auto answer = this->patch(r, ns, name, type, patch, subresource);
  if (answer && read.fields) read.fields->apply(*answer);
  return answer;
}

Result<Json> listAll(KubeClient& client, const Resource& r, const std::string& ns,
                     ListOptions opts) {
  Json all;
  Json items = Json::array();
  bool restarted = false;
  while (true) {
    auto page = client.list(r, ns, opts);
    if (!page) {
      if (page.error().is(ErrorKind::Gone) && !opts.continue_token.empty() && !restarted) {
        // The continue token outlived etcd's compaction: one consistent unpaged list instead.
        restarted = true;
        items = Json::array();
        opts.continue_token.clear();
        opts.limit.reset();
        continue;
      }
      return std::unexpected(std::move(page.error()));
    }
    auto page_items = page->find("items");
    if (page_items != page->end() && page_items->is_array()) {
      for (auto& item : *page_items) items.push_back(std::move(item));
    }
    std::string next;
    if (auto meta = page->find("metadata"); meta != page->end() && meta->is_object()) {
      next = meta->value("continue", "");
    }
    all = std::move(*page);
    if (next.empty()) break;
    if (next == opts.continue_token) {
      return makeError(ErrorKind::Decode, "list " + r.describe() +
                                              ": the server returned the same continue token "
                                              "twice; stopping instead of looping");
    }
    opts.continue_token = std::move(next);
    // The token holds the version the first page was read at; the server refuses another.
    opts.resource_version.clear();
    opts.resource_version_match.clear();
  }
  all["items"] = std::move(items);
  if (all.contains("metadata") && all["metadata"].is_object()) all["metadata"].erase("continue");
  return all;
}

}  // namespace shardscaler::k8s
