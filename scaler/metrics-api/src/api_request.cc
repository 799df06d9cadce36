#include "shardscaler/metrics_api/api_request.h"

#include <curl/curl.h>

#include <algorithm>
#include <memory>
#include <vector>

namespace shardscaler::metrics_api {
namespace {

std::vector<std::string_view> segments(std::string_view path) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start < path.size()) {
    const size_t slash = path.find('/', start);
    const size_t end = slash == std::string_view::npos ? path.size() : slash;
    if (end > start) out.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

ApiError notFound(std::string_view path, const std::string& why) {
  return {404, "NotFound",
          "the server could not find the requested resource " + std::string(path) + ": " + why};
}

// A path segment as the API server accepts it: not empty, no '%', not "." or "..".
// A namespace name: a DNS-1123 label, as the API server requires. Anything else (bytes that are
// not UTF-8 among them) never reaches a SubjectAccessReview.
bool validNamespace(std::string_view s) {
  auto inner = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; };
  return !s.empty() && s.size() <= 63 && std::ranges::all_of(s, inner) && s.front() != '-' &&
         s.back() != '-';
}

}  // namespace

std::optional<std::string> queryParameter(std::string_view query, std::string_view name) {
  size_t start = 0;
  while (start <= query.size()) {
    const size_t amp = std::min(query.find('&', start), query.size());
    const std::string_view pair = query.substr(start, amp - start);
    start = amp + 1;
    const size_t eq = pair.find('=');
    if (pair.substr(0, eq) != name) continue;
    std::string raw(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
    // Form encoding, as Go's url.ParseQuery reads it: '+' is a space.
    for (char& c : raw) {
      if (c == '+') c = ' ';
    }
    int length = 0;
    std::unique_ptr<char, decltype(&curl_free)> decoded(
        curl_easy_unescape(nullptr, raw.data(), static_cast<int>(raw.size()), &length), curl_free);
    if (!decoded) return std::nullopt;
    return std::string(decoded.get(), static_cast<size_t>(length));
  }
  return std::nullopt;
}

std::expected<ApiRequest, ApiError> parseApiRequest(std::string_view method, std::string_view path,
                                                    std::string_view query) {
  if (method != "GET") {
    return std::unexpected(ApiError{405, "MethodNotAllowed",
                                    "the server does not allow " + std::string(method) + " on " +
                                        std::string(path) + ": it serves GET only"});
  }
  ApiRequest request;
  request.path = std::string(path);
  request.attributes = NonResourceAttributes{std::string(path), "get"};
  const auto parts = segments(path);
  const bool apis = !parts.empty() && parts[0] == "apis";
  if (parts.size() == 2 && parts[0] == "openapi" && parts[1] == "v2") {
    request.route = Route::OpenApiV2;
    return request;
  }
  if (apis && parts.size() == 1) {
    request.route = Route::GroupList;
    return request;
  }
  if (!apis || parts[1] != kGroup) {
    return std::unexpected(notFound(path, "shardscaler serves only " + std::string(kGroup)));
  }
  if (parts.size() == 2) {
    request.route = Route::Group;
    return request;
  }
  if (parts[2] != kVersion) {
    return std::unexpected(notFound(path, "shardscaler serves only " + std::string(kGroupVersion)));
  }
  if (parts.size() == 3) {
    request.route = Route::ResourceList;
    return request;
  }
  if (parts.size() != 6 || parts[3] != "namespaces" || !validNamespace(parts[4])) {
    return std::unexpected(notFound(
        path, "metrics are read as /apis/" + std::string(kGroupVersion) +
                  "/namespaces/<namespace>/<metric>?labelSelector=" + std::string(kShardSetLabel) +
                  "%3D<ShardSet>"));
  }
  const auto metric = metricKindOf(parts[5]);
  if (!metric) {
    return std::unexpected(notFound(path, "no metric \"" + std::string(parts[5]) +
                                              "\"; shardscaler serves " + metricNameList()));
  }
  auto selector = k8s::LabelSelector::parse(queryParameter(query, "labelSelector").value_or(""));
  if (!selector) return std::unexpected(ApiError{400, "BadRequest", selector.error()});
  request.route = Route::Metric;
  request.ns = std::string(parts[4]);
  request.metric = *metric;
  request.selector = std::move(*selector);
  request.attributes = ResourceAttributes{request.ns, "list", std::string(kGroup),
                                          std::string(kVersion), std::string(parts[5])};
  return request;
}

nlohmann::json statusJson(const ApiError& error) {
  return {{"kind", "Status"},    {"apiVersion", "v1"},       {"metadata", nlohmann::json::object()},
          {"status", "Failure"}, {"message", error.message}, {"reason", error.reason},
          {"code", error.status}};
}

}  // namespace shardscaler::metrics_api
