// A realistic StatefulSet of one Prometheus shard, shaped as the Prometheus Operator writes
// it (labels, owner, two containers with args/env/mounts, volumes, status). Benchmarks only.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "shardscaler/test_objects/names.h"

namespace shardscaler::bench {

inline nlohmann::json prometheusStatefulSet(int shard, std::int64_t resource_version) {
  const std::string name = test_objects::shardName(shard);
  const std::string shard_label = std::to_string(shard);
  auto object = nlohmann::json::parse(R"({
  "apiVersion": "apps/v1", "kind": "StatefulSet",
  "metadata": {
    "namespace": "monitoring", "generation": 3,
    "uid": "8d1f4e2a-3b1c-4c52-9f0e-6a7b2c9d1e00",
    "creationTimestamp": "2026-11-20T10:00:00Z",
    "labels": {
      "app.kubernetes.io/instance": "main", "app.kubernetes.io/managed-by": "prometheus-operator",
      "app.kubernetes.io/name": "prometheus", "app.kubernetes.io/version": "2.53.0",
      "operator.prometheus.io/mode": "server", "operator.prometheus.io/name": "main",
      "prometheus": "main"
    },
    "annotations": {
      "operator.prometheus.io/controller-id": "",
      "prometheus-operator-input-hash": "15533302424163585921"
    },
    "ownerReferences": [{"apiVersion": "monitoring.coreos.com/v1", "kind": "Prometheus",
      "name": "main", "uid": "0c8b6a44-5d2e-4f1a-8b3c-2e9d7f6a5b41",
      "controller": true, "blockOwnerDeletion": true}],
    "managedFields": [
      {"manager": "PrometheusOperator", "operation": "Update", "apiVersion": "apps/v1",
       "time": "2026-11-20T10:00:00Z", "fieldsType": "FieldsV1",
       "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:prometheus-operator-input-hash": {}},
         "f:labels": {".": {}, "f:operator.prometheus.io/name": {}, "f:operator.prometheus.io/shard": {}},
         "f:ownerReferences": {".": {}}},
         "f:spec": {"f:podManagementPolicy": {}, "f:replicas": {}, "f:selector": {},
           "f:serviceName": {}, "f:template": {"f:spec": {"f:containers": {}, "f:volumes": {}}}}}}
    ]
  },
  "spec": {
    "replicas": 1, "serviceName": "prometheus-operated", "podManagementPolicy": "Parallel",
    "revisionHistoryLimit": 10, "minReadySeconds": 0,
    "updateStrategy": {"type": "RollingUpdate"},
    "selector": {"matchLabels": {"app.kubernetes.io/instance": "main",
      "app.kubernetes.io/managed-by": "prometheus-operator", "app.kubernetes.io/name": "prometheus",
      "operator.prometheus.io/name": "main", "prometheus": "main"}},
    "template": {
      "metadata": {
        "annotations": {"kubectl.kubernetes.io/default-container": "prometheus"},
        "labels": {"app.kubernetes.io/instance": "main",
          "app.kubernetes.io/managed-by": "prometheus-operator",
          "app.kubernetes.io/name": "prometheus", "app.kubernetes.io/version": "2.53.0",
          "operator.prometheus.io/name": "main", "prometheus": "main"}},
      "spec": {
        "serviceAccountName": "prometheus-main", "terminationGracePeriodSeconds": 600,
        "automountServiceAccountToken": true,
        "securityContext": {"fsGroup": 2000, "runAsNonRoot": true, "runAsUser": 1000},
        "containers": [
          {"name": "prometheus", "image": "quay.io/prometheus/prometheus:v2.53.0",
           "args": ["--web.console.templates=/etc/prometheus/consoles",
             "--web.console.libraries=/etc/prometheus/console_libraries",
             "--config.file=/etc/prometheus/config_out/prometheus.env.yaml",
             "--web.enable-lifecycle", "--web.route-prefix=/",
             "--storage.tsdb.retention.time=24h", "--storage.tsdb.path=/prometheus",
             "--web.config.file=/etc/prometheus/web_config/web-config.yaml"],
           "env": [{"name": "SHARD", "value": "0"}],
           "ports": [{"name": "web", "containerPort": 9090, "protocol": "TCP"}],
           "readinessProbe": {"httpGet": {"path": "/-/ready", "port": "web", "scheme": "HTTP"},
             "periodSeconds": 5, "timeoutSeconds": 3, "failureThreshold": 3},
           "startupProbe": {"httpGet": {"path": "/-/ready", "port": "web", "scheme": "HTTP"},
             "periodSeconds": 15, "timeoutSeconds": 3, "failureThreshold": 60},
           "resources": {"requests": {"cpu": "100m", "memory": "400Mi"}},
           "terminationMessagePolicy": "FallbackToLogsOnError",
           "volumeMounts": [
             {"name": "config-out", "mountPath": "/etc/prometheus/config_out", "readOnly": true},
             {"name": "tls-assets", "mountPath": "/etc/prometheus/certs", "readOnly": true},
             {"name": "prometheus-main-db", "mountPath": "/prometheus", "subPath": "prometheus-db"},
             {"name": "prometheus-main-rulefiles-0", "mountPath": "/etc/prometheus/rules/prometheus-main-rulefiles-0"},
             {"name": "web-config", "mountPath": "/etc/prometheus/web_config/web-config.yaml",
              "subPath": "web-config.yaml", "readOnly": true}]},
          {"name": "config-reloader",
           "image": "quay.io/prometheus-operator/prometheus-config-reloader:v0.93.0",
           "command": ["/bin/prometheus-config-reloader"],
           "args": ["--listen-address=:8080", "--reload-url=http://127.0.0.1:9090/-/reload",
             "--config-file=/etc/prometheus/config/prometheus.yaml.gz",
             "--config-envsubst-file=/etc/prometheus/config_out/prometheus.env.yaml",
             "--watched-dir=/etc/prometheus/rules/prometheus-main-rulefiles-0"],
           "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1",
             "fieldPath": "metadata.name"}}}, {"name": "SHARD", "value": "0"}],
           "ports": [{"name": "reloader-web", "containerPort": 8080, "protocol": "TCP"}],
           "resources": {"limits": {"cpu": "10m", "memory": "50Mi"},
             "requests": {"cpu": "10m", "memory": "50Mi"}},
           "volumeMounts": [
             {"name": "config", "mountPath": "/etc/prometheus/config"},
             {"name": "config-out", "mountPath": "/etc/prometheus/config_out"},
             {"name": "prometheus-main-rulefiles-0", "mountPath": "/etc/prometheus/rules/prometheus-main-rulefiles-0"}]}
        ],
        "volumes": [
          {"name": "config", "secret": {"secretName": "prometheus-main", "defaultMode": 420}},
          {"name": "tls-assets", "projected": {"defaultMode": 420,
            "sources": [{"secret": {"name": "prometheus-main-tls-assets-0"}}]}},
          {"name": "config-out", "emptyDir": {"medium": "Memory"}},
          {"name": "prometheus-main-rulefiles-0", "configMap": {"name": "prometheus-main-rulefiles-0",
            "defaultMode": 420}},
          {"name": "web-config", "secret": {"secretName": "prometheus-main-web-config",
            "defaultMode": 420}},
          {"name": "prometheus-main-db", "emptyDir": {}}
        ]
      }
    }
  },
  "status": {"observedGeneration": 3, "replicas": 1, "readyReplicas": 1, "currentReplicas": 1,
    "updatedReplicas": 1, "availableReplicas": 1, "collisionCount": 0,
    "currentRevision": "prometheus-main-7d9c8b6f5d", "updateRevision": "prometheus-main-7d9c8b6f5d"}
})");
  auto& meta = object["metadata"];
  meta["name"] = name;
  meta["resourceVersion"] = std::to_string(resource_version);
  meta["labels"]["operator.prometheus.io/shard"] = shard_label;
  object["spec"]["selector"]["matchLabels"]["operator.prometheus.io/shard"] = shard_label;
  object["spec"]["template"]["metadata"]["labels"]["operator.prometheus.io/shard"] = shard_label;
  for (auto& container : object["spec"]["template"]["spec"]["containers"]) {
    for (auto& env : container["env"]) {
      if (env.value("name", std::string()) == "SHARD") env["value"] = shard_label;
    }
  }
  object["status"]["currentRevision"] = name + "-7d9c8b6f5d";
  object["status"]["updateRevision"] = name + "-7d9c8b6f5d";
  return object;
}

}  // namespace shardscaler::bench
