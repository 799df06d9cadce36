#include "prometheus_config.h"

#include <zlib.h>

#include <array>
#include <cstdint>

#include <yaml-cpp/yaml.h>

#include "scrape_jobs.h"
#include "shard_naming.h"
#include "shardscaler/k8s_client/base64.h"
#include "target_spec.h"

namespace shardscaler::emulator {

bool unmanagedConfiguration(const TargetKind& kind, const Json& target) {
  if (!kind.server) return false;
  const Json& spec = specOf(target);
  for (const char* selector :
       {"serviceMonitorSelector", "podMonitorSelector", "probeSelector", "scrapeConfigSelector"}) {
    if (auto s = spec.find(selector); s != spec.end() && !s->is_null()) return false;
  }
  return true;
}

std::optional<SecretKeyRef> additionalScrapeConfigsRef(const Json& target) {
  const Json& spec = specOf(target);
  auto ref = spec.find("additionalScrapeConfigs");
  if (ref == spec.end() || !ref->is_object()) return std::nullopt;
  return SecretKeyRef{ref->value("name", ""), ref->value("key", ""), ref->value("optional", false)};
}

k8s::Result<std::string> generateConfiguration(const TargetKind& kind, const Json& target,
                                               const std::string& additional_scrape_configs,
                                               const ScrapeObjects& objects) {
  const Json& meta = objectField(target, "metadata");
  const Json& spec = specOf(target);
  const int shards = shardsNumber(target);
  auto classes = scrapeClasses(target);
  if (!classes) return std::unexpected(classes.error());

  YAML::Node additional;
  try {
    additional = YAML::Load(additional_scrape_configs);
  } catch (const YAML::Exception& e) {
    return k8s::makeError(
        k8s::ErrorKind::Invalid,
        std::string("unmarshalling additional scrape configs failed: ") + e.what());
  }
  if (!additional.IsNull() && !additional.IsSequence()) {
    return k8s::makeError(k8s::ErrorKind::Invalid,
                          "unmarshalling additional scrape configs failed: not a list");
  }

  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "global" << YAML::Value << YAML::BeginMap;
  if (kind.server) {
    out << YAML::Key << "evaluation_interval" << YAML::Value
        << specString(spec, "evaluationInterval", "30s");
  }
  out << YAML::Key << "scrape_interval" << YAML::Value << specString(spec, "scrapeInterval", "30s");
  if (auto timeout = specString(spec, "scrapeTimeout", ""); !timeout.empty()) {
    out << YAML::Key << "scrape_timeout" << YAML::Value << timeout;
  }
  out << YAML::Key << "external_labels" << YAML::Value << YAML::BeginMap << YAML::Key
      << "prometheus" << YAML::Value << meta.value("namespace", "") + "/" + meta.value("name", "")
      << YAML::Key << "prometheus_replica" << YAML::Value << "$(POD_NAME)" << YAML::EndMap;
  out << YAML::EndMap;

  out << YAML::Key << "scrape_configs" << YAML::Value << YAML::BeginSeq;
  for (const YAML::Node& job : scrapeJobs(objects, *classes, shards)) out << job;
  if (additional.IsSequence()) {
    for (const auto& scrape_config : additional) {
      if (!scrape_config.IsMap()) {
        return k8s::makeError(k8s::ErrorKind::Invalid,
                              "error parsing additional scrape config: not a map");
      }
      if (shards == 1) {  // generateAdditionalScrapeConfigs leaves them as they are
        out << scrape_config;
        continue;
      }
      YAML::Node relabelings(YAML::NodeType::Sequence);
      out << YAML::BeginMap;
      for (const auto& item : scrape_config) {
        if (item.first.as<std::string>() == "relabel_configs") {
          if (!item.second.IsSequence()) {
            return k8s::makeError(k8s::ErrorKind::Invalid, "error parsing relabel configs");
          }
          relabelings = item.second;
          continue;
        }
        out << YAML::Key << item.first << YAML::Value << item.second;
      }
      YAML::Node rules(YAML::NodeType::Sequence);
      for (const auto& rule : relabelings) rules.push_back(rule);
      if (!hasHashmod(relabelings)) appendShardingRules(rules, shards, "__address__");
      out << YAML::Key << "relabel_configs" << YAML::Value << rules << YAML::EndMap;
    }
  }
  out << YAML::EndSeq << YAML::EndMap;
  if (!out.good()) {
    return k8s::makeError(k8s::ErrorKind::Invalid,
                          std::string("generating config failed: ") + out.GetLastError());
  }
  return std::string(out.c_str()) + "\n";
}

std::string gzipCompress(const std::string& data) {
  z_stream stream{};
  // windowBits 15 + 16: a gzip wrapper; zlib writes mtime 0 and OS "unknown" like Go's writer.
  deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out;
  out.resize(deflateBound(&stream, data.size()) + 32);
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

k8s::Result<std::string> gzipDecompress(const std::string& data) {
  z_stream stream{};
  if (inflateInit2(&stream, 15 + 16) != Z_OK) {
    return k8s::makeError(k8s::ErrorKind::Decode, "inflateInit2 failed");
  }
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  std::string out;
  std::array<char, 16384> buffer{};
  int rc = Z_OK;
  while (rc == Z_OK) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer.data());
    stream.avail_out = static_cast<uInt>(buffer.size());
    rc = inflate(&stream, Z_NO_FLUSH);
    out.append(buffer.data(), buffer.size() - stream.avail_out);
    if (rc == Z_BUF_ERROR && stream.avail_in == 0) break;
  }
  inflateEnd(&stream);
  if (rc != Z_STREAM_END) {
    return k8s::makeError(k8s::ErrorKind::Decode, "not a complete gzip stream");
  }
  return out;
}

Json makeConfigSecret(const TargetKind& kind, const Json& target, const std::string& config) {
  const Json& meta = objectField(target, "metadata");
  return Json{
      {"apiVersion", "v1"},
      {"kind", "Secret"},
      {"metadata",
       {{"name", configSecretName(kind, meta.value("name", ""))},
        {"namespace", meta.value("namespace", "")},
        {"labels", {{kManagedByLegacyLabel, kManagedByValue}, {kManagedByLabel, kManagedByValue}}},
        {"ownerReferences", Json::array({controllerOwnerReference(kind, target)})}}},
      {"data", {{kConfigSecretKey, k8s::base64Encode(gzipCompress(config))}}},
  };
}

Json makeGoverningService(const TargetKind& kind, const Json& target) {
  const Json& meta = objectField(target, "metadata");
  const std::string port_name = specString(specOf(target), "portName", "web");
  return Json{
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata",
       {{"name", kind.governing_service},
        {"namespace", meta.value("namespace", "")},
        {"labels",
         {{kManagedByLegacyLabel, kManagedByValue},
          {kManagedByLabel, kManagedByValue},
          {"operated-prometheus", "true"}}},
        {"ownerReferences", Json::array({ownerReference(kind, target)})}}},
      {"spec",
       {{"clusterIP", "None"},
        {"ports",
         Json::array({Json{{"name", port_name}, {"port", 9090}, {"targetPort", port_name}}})},
        {"selector", {{kAppNameLabel, kind.app_name}}}}},
  };
}

}  // namespace shardscaler::emulator
