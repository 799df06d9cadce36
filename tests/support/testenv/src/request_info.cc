#include "request_info.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace shardscaler::testenv::control_plane_detail {

namespace {

std::vector<std::string> splitPath(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto slash = path.find('/', start);
    const auto end = slash == std::string_view::npos ? path.size() : slash;
    if (end > start) parts.emplace_back(path.substr(start, end - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return parts;
}

// True when the query has watch=true or watch=1 (the API server's ParseBool).
bool watchRequested(std::string_view query) {
  std::size_t start = 0;
  while (start < query.size()) {
    const auto amp = query.find('&', start);
    const auto param = query.substr(start, amp == std::string_view::npos ? amp : amp - start);
    if (param == "watch=true" || param == "watch=1" || param == "watch=True" ||
        param == "watch=TRUE" || param == "watch=t" || param == "watch=T") {
      return true;
    }
    if (amp == std::string_view::npos) break;
    start = amp + 1;
  }
  return false;
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

bool RequestInfo::isWrite() const {
  return verb == "create" || verb == "update" || verb == "patch" || verb == "delete" ||
         verb == "deletecollection" || verb == "post" || verb == "put";
}

RequestInfo classifyApiRequest(std::string_view method, std::string_view target) {
  RequestInfo request;
  const auto question = target.find('?');
  request.path = std::string(target.substr(0, question));
  const std::string_view query =
      question == std::string_view::npos ? std::string_view() : target.substr(question + 1);
  const std::string http_verb = lower(method);
  request.verb = http_verb;

  auto parts = splitPath(request.path);
  std::size_t at = 0;
  if (parts.size() >= 2 && parts[0] == "api") {
    at = 2;  // /api/v1
  } else if (parts.size() >= 3 && parts[0] == "apis") {
    at = 3;  // /apis/<group>/<version>
  } else {
    return request;  // /version, /readyz, /openapi/v2 ...
  }
  request.resource_request = true;
  bool watch = false;
  if (at < parts.size() && parts[at] == "watch") {  // the deprecated /watch/ prefix
    watch = true;
    ++at;
  }
  if (at < parts.size() && parts[at] == "namespaces" && parts.size() - at >= 3) {
    request.ns = parts[at + 1];
    at += 2;
  }
  if (at < parts.size()) request.resource = parts[at];
  if (at + 1 < parts.size()) request.name = parts[at + 1];
  if (at + 2 < parts.size()) request.subresource = parts[at + 2];
  if (request.resource == "namespaces" && !request.name.empty() && request.ns.empty()) {
    request.ns = request.name;  // a namespace is its own namespace, as the API server says
  }

  if (http_verb == "get" || http_verb == "head") {
    if (watch || watchRequested(query)) {
      request.verb = "watch";
    } else {
      request.verb = request.name.empty() ? "list" : "get";
    }
  } else if (http_verb == "post") {
    request.verb = "create";
  } else if (http_verb == "put") {
    request.verb = "update";
  } else if (http_verb == "patch") {
    request.verb = "patch";
  } else if (http_verb == "delete") {
    request.verb = request.name.empty() ? "deletecollection" : "delete";
  }
  return request;
}

}  // namespace shardscaler::testenv::control_plane_detail
