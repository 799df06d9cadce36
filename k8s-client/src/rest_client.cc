#include "shardscaler/k8s_client/rest_client.h"

#include <optional>
#include <utility>

#include "rest_client_impl.h"
#include "shardscaler/k8s_client/api_status.h"
#include "shardscaler/k8s_client/field_mask.h"
#include "shardscaler/k8s_client/list_stream.h"
#include "shardscaler/k8s_meta/url_encoding.h"

namespace shardscaler::k8s {
namespace {

size_t appendToString(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

// A list's bytes go to its decoder as they come; a decode error ends the transfer.
struct ListBody {
  explicit ListBody(const FieldMask* item_fields) : decoder(item_fields) {}
  ListStreamDecoder decoder;
  std::optional<Error> error;
};

size_t feedList(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<ListBody*>(user);
  auto fed = body->decoder.feed(std::string_view(data, size * count));
  if (!fed) {
    body->error = std::move(fed.error());
    return 0;  // CURLE_WRITE_ERROR
  }
  return size * count;
}

std::optional<std::chrono::seconds> retryAfterHeader(CURL* curl) {
  curl_header* header = nullptr;
  if (curl_easy_header(curl, "Retry-After", 0, CURLH_HEADER, -1, &header) != CURLHE_OK) {
    return std::nullopt;
  }
  return parseRetryAfter(header->value);
}

// The namespace a write goes to: the argument, else the object's own.
std::string namespaceFor(const Resource& r, const std::string& ns, const Json& obj) {
  if (!r.namespaced || !ns.empty()) return ns;
  auto meta = obj.find("metadata");
  if (meta == obj.end() || !meta->is_object()) return ns;
  return meta->value("namespace", "");
}

std::string nameOf(const Json& obj) {
  auto meta = obj.find("metadata");
  if (meta == obj.end() || !meta->is_object()) return {};
  return meta->value("name", "");
}

// GET, or the method with its body.
void setMethodAndBody(CURL* curl, const char* method, const std::string& body) {
  if (std::string_view(method) == "GET") {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    return;
  }
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
  if (!body.empty()) {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
}

// A 2xx body that is not a list: the fields asked for, or all of it; a body that is not JSON is
// an error unless the caller takes text.
Result<Json> decodeBody(std::string body, const FieldMask* fields, bool text_body_ok,
                        int http_status, const std::string& request) {
  if (fields != nullptr) {
    auto projected = parseProjected(body, *fields);
    if (projected) return projected;
    Error error = std::move(projected.error());
    error.http_status = http_status;
    error.message = request + ": the response is not JSON: " + error.message;
    return std::unexpected(std::move(error));
  }
  static const FieldMask kWhole = FieldMask::keepAll();
  auto parsed = parseProjected(body, kWhole);  // simdjson's tokenizer, nlohmann's DOM
  if (!parsed) {
    if (text_body_ok) return Json(std::move(body));
    Error error;
    error.kind = ErrorKind::Decode;
    error.http_status = http_status;
    error.message = request + ": the response is not JSON: " + body.substr(0, 200);
    return std::unexpected(std::move(error));
  }
  return std::move(*parsed);
}

}  // namespace

RestClient::Impl::Impl(KubeConfig config_in, RestClientOptions options_in)
    : config(std::move(config_in)),
      options(std::move(options_in)),
      token(config.token, config.token_file, config.token_refresh_interval, options.clock),
      pool(options.max_idle_connections) {
  detail::ensureCurlInitialized();
}

std::string RestClient::Impl::describeRequest(std::string_view verb, std::string_view resource,
                                              std::string_view method, std::string_view path) {
  std::string text(verb);
  if (!resource.empty()) text += " " + std::string(resource);
  text += " (" + std::string(method) + " " + std::string(path) + ")";
  return text;
}

void RestClient::Impl::observe(std::string_view verb, std::string_view resource, long http_status,
                               Clock::MonotonicTime started) const {
  if (!options.observer) return;
  options.observer(RequestRecord{.verb = verb,
                                 .resource = resource,
                                 .http_status = static_cast<int>(http_status),
                                 .latency = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     options.clock->monotonicNow() - started)});
}

Result<Json> RestClient::Impl::execute(const Call& call) {
  std::string request = describeRequest(call.verb, call.resource, call.method, call.path);
  auto started = options.clock->monotonicNow();
  auto bearer = token.current();
  if (!bearer) {
    observe(call.verb, call.resource, 0, started);
    return makeError(ErrorKind::Config, request + ": " + bearer.error().message);
  }
  detail::CurlHandle handle = pool.acquire();
  if (!handle) {
    observe(call.verb, call.resource, 0, started);
    return makeError(ErrorKind::Transport, request + ": libcurl could not create a handle");
  }
  CURL* curl = handle.get();
  detail::TransferState state;
  std::vector<std::string> headers;
  if (!call.content_type.empty()) headers.push_back("Content-Type: " + call.content_type);
  if (!call.accept.empty()) headers.push_back("Accept: " + call.accept);
  applyCommonOptions(curl, config, config.server + call.path, *bearer, std::move(headers), state);
  curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(config.request_timeout.count()));
  setMethodAndBody(curl, call.method, call.body);
  std::string body;
  std::optional<ListBody> list_body;
  if (call.list) {
    list_body.emplace(call.item_fields);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &feedList);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &*list_body);
  } else {
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &appendToString);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  }

  CURLcode code = curl_easy_perform(curl);
  long http_status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &http_status);
  auto retry_after = retryAfterHeader(curl);
  pool.release(std::move(handle));
  observe(call.verb, call.resource, code == CURLE_OK ? http_status : 0, started);

  auto not_a_list = [&](Error error) {
    error.http_status = static_cast<int>(http_status);
    error.message = request + ": the response is not a list: " + error.message;
    return std::unexpected(std::move(error));
  };
  if (list_body && list_body->error) return not_a_list(std::move(*list_body->error));
  if (code != CURLE_OK) return std::unexpected(transportError(code, state, request, config));
  const std::string& text = list_body ? list_body->decoder.rest() : body;
  if (http_status < 200 || http_status > 299) {
    // A rejected token may have been rotated on disk since it was read.
    if (http_status == 401) token.invalidate();
    return std::unexpected(
        errorFromResponse(static_cast<int>(http_status), text, retry_after, request));
  }
  if (text.empty()) return Json::object();
  if (list_body) {
    auto list = list_body->decoder.finish();
    if (!list) return not_a_list(std::move(list.error()));
    return list;
  }
  return decodeBody(std::move(body), call.fields, call.text_body_ok, static_cast<int>(http_status),
                    request);
}

std::string RestClient::Impl::metadataAccept(bool list) {
  // As client-go's metadata client, with plain JSON last for servers that cannot convert.
  return std::string("application/json;as=") +
         (list ? "PartialObjectMetadataList" : "PartialObjectMetadata") +
         ";g=meta.k8s.io;v=v1,application/json";
}

RestClient::Impl::Call RestClient::Impl::makeCall(std::string_view verb, std::string resource,
                                                  const char* method, std::string path,
                                                  std::string body, std::string content_type) {
  Call call;
  call.verb = verb;
  call.resource = std::move(resource);
  call.method = method;
  call.path = std::move(path);
  call.body = std::move(body);
  call.content_type = std::move(content_type);
  return call;
}

std::string RestClient::Impl::withFieldManager(std::string path) const {
  detail::appendQuery(path, "fieldManager", options.field_manager);
  return path;
}

RestClient::RestClient(KubeConfig config, RestClientOptions options)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(options))) {}

RestClient::~RestClient() = default;

const KubeConfig& RestClient::config() const { return impl_->config; }

Result<Json> RestClient::get(const Resource& r, const std::string& ns, const std::string& name,
                             const std::string& subresource) {
  return impl_->execute(
      Impl::makeCall("get", r.describe(), "GET", r.objectPath(ns, name, subresource)));
}

Result<Json> RestClient::list(const Resource& r, const std::string& ns, const ListOptions& opts) {
  std::string path = r.collectionPath(ns);
  detail::appendQuery(path, "labelSelector", opts.label_selector);
  detail::appendQuery(path, "fieldSelector", opts.field_selector);
  if (opts.limit) detail::appendQuery(path, "limit", std::to_string(*opts.limit));
  detail::appendQuery(path, "continue", opts.continue_token);
  detail::appendQuery(path, "resourceVersion", opts.resource_version);
  detail::appendQuery(path, "resourceVersionMatch", opts.resource_version_match);
  auto call = Impl::makeCall("list", r.describe(), "GET", std::move(path));
  if (opts.metadata_only) call.accept = Impl::metadataAccept(/*list=*/true);
  call.list = true;
  call.item_fields = opts.fields.get();
  return impl_->execute(call);
}

Result<Json> RestClient::create(const Resource& r, const std::string& ns, const Json& obj) {
  return impl_->execute(
      Impl::makeCall("create", r.describe(), "POST",
                     impl_->withFieldManager(r.collectionPath(namespaceFor(r, ns, obj))),
                     obj.dump(), "application/json"));
}

Result<Json> RestClient::update(const Resource& r, const std::string& ns, const Json& obj,
                                const std::string& subresource) {
  std::string name = nameOf(obj);
  if (name.empty()) {
    return makeError(ErrorKind::Invalid,
                     "update " + r.describe() + ": the object has no metadata.name");
  }
  return impl_->execute(Impl::makeCall(
      "update", r.describe(), "PUT",
      impl_->withFieldManager(r.objectPath(namespaceFor(r, ns, obj), name, subresource)),
      obj.dump(), "application/json"));
}

Result<Json> RestClient::patch(const Resource& r, const std::string& ns, const std::string& name,
                               PatchType type, const Json& patch, const std::string& subresource) {
  return patchReading(r, ns, name, type, patch, subresource, {});
}

Result<Json> RestClient::patchReading(const Resource& r, const std::string& ns,
                                      const std::string& name, PatchType type, const Json& patch,
                                      const std::string& subresource, const AnswerFields& read) {
  const char* content_type = "application/merge-patch+json";
  if (type == PatchType::Json) content_type = "application/json-patch+json";
  if (type == PatchType::StrategicMerge) content_type = "application/strategic-merge-patch+json";
  auto call = Impl::makeCall("patch", r.describe(), "PATCH",
                             impl_->withFieldManager(r.objectPath(ns, name, subresource)),
                             patch.dump(), content_type);
  if (read.metadata_only) call.accept = Impl::metadataAccept(/*list=*/false);
  call.fields = read.fields.get();
  return impl_->execute(call);
}

Result<Json> RestClient::remove(const Resource& r, const std::string& ns, const std::string& name,
                                const DeleteOptions& opts) {
  Json body = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}};
  if (opts.propagation_policy) body["propagationPolicy"] = *opts.propagation_policy;
  if (opts.grace_period_seconds) body["gracePeriodSeconds"] = *opts.grace_period_seconds;
  if (opts.precondition_uid) body["preconditions"]["uid"] = *opts.precondition_uid;
  if (opts.precondition_resource_version) {
    body["preconditions"]["resourceVersion"] = *opts.precondition_resource_version;
  }
  return impl_->execute(Impl::makeCall("delete", r.describe(), "DELETE", r.objectPath(ns, name),
                                       body.dump(), "application/json"));
}

Result<Json> RestClient::getPath(const std::string& path) {
  auto call = Impl::makeCall("get", "", "GET", path);
  call.text_body_ok = true;
  return impl_->execute(call);
}

}  // namespace shardscaler::k8s
