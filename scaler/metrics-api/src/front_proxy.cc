#include "shardscaler/metrics_api/front_proxy.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstdint>

#include "shardscaler/base/expected.h"

namespace shardscaler::metrics_api {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kAuthenticatedGroup = "system:authenticated";

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool startsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && equalsIgnoreCase(s.substr(0, prefix.size()), prefix);
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::ranges::transform(out, out.begin(), [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  });
  return out;
}

// The data values that hold lists are JSON arrays of strings ("[\"X-Remote-User\"]").
Expected<std::vector<std::string>> stringList(const Json& data, const std::string& key) {
  auto it = data.find(key);
  if (it == data.end() || !it->is_string() || it->get<std::string>().empty()) {
    return std::vector<std::string>{};
  }
  const Json parsed = Json::parse(it->get<std::string>(), nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_array()) return std::unexpected(key + ": not a JSON array");
  std::vector<std::string> out;
  for (const Json& v : parsed) {
    if (!v.is_string()) return std::unexpected(key + ": not a JSON array of strings");
    if (!v.get<std::string>().empty()) out.push_back(v.get<std::string>());
  }
  return out;
}

std::string percentDecode(std::string_view s) {
  int length = 0;
  char* decoded = curl_easy_unescape(nullptr, s.data(), static_cast<int>(s.size()), &length);
  if (decoded == nullptr) return std::string(s);
  std::string out(decoded, static_cast<size_t>(length));
  curl_free(decoded);
  return out;
}

}  // namespace

Expected<RequestHeaderConfig> requestHeaderConfigFromConfigMap(const Json& config_map) {
  const Json data = config_map.value("data", Json::object());
  if (!data.is_object()) return std::unexpected("data: not an object");
  RequestHeaderConfig config;
  if (auto ca = data.find("requestheader-client-ca-file");
      ca != data.end() && ca->is_string() && !ca->get<std::string>().empty()) {
    auto bundle = certificates::TrustBundle::fromPem(ca->get<std::string>());
    if (!bundle) return std::unexpected("requestheader-client-ca-file: " + bundle.error());
    config.client_ca = std::move(*bundle);
  }
  struct ListKey {
    const char* key;
    std::vector<std::string>* into;
  };
  for (const ListKey& k : {ListKey{"requestheader-allowed-names", &config.allowed_names},
                           {"requestheader-username-headers", &config.username_headers},
                           {"requestheader-group-headers", &config.group_headers},
                           {"requestheader-extra-headers-prefix", &config.extra_header_prefixes}}) {
    auto list = stringList(data, k.key);
    if (!list) return std::unexpected(list.error());
    *k.into = std::move(*list);
  }
  return config;
}

namespace {

// Well-formed UTF-8 (RFC 3629): no overlong forms, surrogates or code points past U+10FFFF.
bool isUtf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t n = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + n >= text.size()) return false;
    for (std::size_t k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(text[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    constexpr uint32_t kMinOf[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMinOf[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

}  // namespace

Expected<UserInfo> authenticate(const serving::PeerCertificate& peer,
                                const serving::HeaderList& headers,
                                const RequestHeaderConfig& config) {
  if (!config.client_ca) {
    return std::unexpected(
        "the cluster publishes no requestheader-client-ca-file in kube-system/"
        "extension-apiserver-authentication, so no front proxy can be trusted (start the API "
        "server with --requestheader-client-ca-file)");
  }
  if (!peer.verified) {
    return std::unexpected(
        "no client certificate signed by the front proxy's CA (requestheader-client-ca-file): "
        "call this API through the Kubernetes API server");
  }
  // Every name below ends up in JSON (a SubjectAccessReview, a Status), which must be UTF-8.
  if (!isUtf8(peer.subject_common_name)) {
    return std::unexpected(std::string("client certificate CN is not UTF-8"));
  }
  if (!config.allowed_names.empty() &&
      std::ranges::find(config.allowed_names, peer.subject_common_name) ==
          config.allowed_names.end()) {
    return std::unexpected("client certificate CN=\"" + peer.subject_common_name +
                           "\" is not among requestheader-allowed-names");
  }
  UserInfo user;
  for (const std::string& name_header : config.username_headers) {
    for (const auto& [name, value] : headers) {
      if (equalsIgnoreCase(name, name_header) && !value.empty()) {
        user.name = value;
        break;
      }
    }
    if (!user.name.empty()) break;
  }
  if (user.name.empty()) {
    return std::unexpected("the front proxy named no user (none of the headers " +
                           Json(config.username_headers).dump() + ")");
  }
  for (const std::string& group_header : config.group_headers) {
    for (const auto& [name, value] : headers) {
      if (equalsIgnoreCase(name, group_header)) user.groups.push_back(value);
    }
  }
  for (const std::string& prefix : config.extra_header_prefixes) {
    for (const auto& [name, value] : headers) {
      if (!startsWithIgnoreCase(name, prefix) || name.size() == prefix.size()) continue;
      // Lower-cased before it is decoded, as apiserver's newExtra does.
      user.extra[percentDecode(lower(std::string_view(name).substr(prefix.size())))].push_back(
          value);
    }
  }
  bool utf8 = isUtf8(user.name) && std::ranges::all_of(user.groups, isUtf8);
  for (const auto& [key, values] : user.extra) {
    utf8 = utf8 && isUtf8(key) && std::ranges::all_of(values, isUtf8);
  }
  if (!utf8) return std::unexpected(std::string("the front proxy's user headers are not UTF-8"));
  if (std::ranges::find(user.groups, kAuthenticatedGroup) == user.groups.end() &&
      user.name != "system:anonymous") {
    user.groups.emplace_back(kAuthenticatedGroup);
  }
  return user;
}

}  // namespace shardscaler::metrics_api
