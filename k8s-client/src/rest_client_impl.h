// RestClient's state, shared by its verbs (rest_client.cc) and its watch (rest_watch.cc).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "bearer_token.h"
#include "curl_transfer.h"
#include "shardscaler/k8s_client/rest_client.h"

namespace shardscaler::k8s {

struct RestClient::Impl {
  Impl(KubeConfig config_in, RestClientOptions options_in);

  // One request/response exchange; the body decoded as JSON on 2xx, else the typed Error.
  struct Call {
    std::string_view verb;  // Kubernetes verb, for messages and the observer
    std::string resource;   // Resource::describe(), "" for a raw path
    const char* method = "GET";
    std::string path;  // with query string
    std::string body;
    std::string content_type;           // for requests with a body
    bool text_body_ok = false;          // a 2xx body that is not JSON comes back as a JSON string
    std::string accept;                 // "" = application/json
    const FieldMask* fields = nullptr;  // decode only these fields of a 2xx body
    // A list: the body is decoded item by item as it arrives (ListStreamDecoder), never held
    // whole; each item keeps only item_fields (nullptr: whole items).
    bool list = false;
    const FieldMask* item_fields = nullptr;
  };
  static Call makeCall(std::string_view verb, std::string resource, const char* method,
                       std::string path, std::string body = {}, std::string content_type = {});
  Result<Json> execute(const Call& call);

  // "list statefulsets.apps/v1 (GET /apis/apps/v1/statefulsets?limit=5)"
  // The Accept header of a metadata-only request: PartialObjectMetadata(List), else plain JSON.
  static std::string metadataAccept(bool list);
  // path with `fieldManager=<options.field_manager>` added to its query, when one is set.
  std::string withFieldManager(std::string path) const;

  static std::string describeRequest(std::string_view verb, std::string_view resource,
                                     std::string_view method, std::string_view path);
  void observe(std::string_view verb, std::string_view resource, long http_status,
               Clock::MonotonicTime started) const;

  const KubeConfig config;
  const RestClientOptions options;
  detail::BearerToken token;
  detail::CurlHandlePool pool;
};

}  // namespace shardscaler::k8s
