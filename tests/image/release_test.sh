#!/usr/bin/env bash
# The release as a user installs it, from this clone: hack/image.sh builds the image and pushes it
# to a registry (Debian's docker-registry, on loopback), hack/release.sh renders the standalone
# flavour for that registry, kubectl applies it to the test control plane (Kubernetes 1.20), and a
# ShardSet scales up and down. Then the uninstall README.md documents: the ShardSets first, then
# the install; nothing is left paused, no retained shard is deleted, nothing is left behind.
#
# The control plane has no kubelet, so this test plays it for one of the Deployment's pods: it
# binds the pod to a Node, pulls the pod's image from the registry, runs it with podman with the
# pod's args and security context, as the pod's ServiceAccount (its token Secret mounted where the
# kubelet mounts it), and reports the pod Ready once its readiness probe answers 200. The
# Endpoints controller then puts the pod behind deploy/'s Services, and the API server calls the
# shard guard through them. The other replica stays Pending: the API server reaches the one that
# runs.
#
# After the build, everything runs in a network namespace of its own: the registry, the control
# plane and the container listen on its loopback only, and the pod's IP is 10.200.0.1 on that
# loopback (the API server refuses loopback addresses in Endpoints).
# Usage: release_test.sh <shardscaler> <kube-testenv> <operator-emulator>
# Exit 77 (ctest's SKIP_RETURN_CODE): not root, or podman cannot run containers here.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "==> $* ($(date +%T))"; }

if [ "${1:-}" != --inside ]; then
  [ $# -eq 3 ] || fail "usage: release_test.sh <shardscaler> <kube-testenv> <operator-emulator>"
  if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: building the image and a network namespace need root"
    exit 77
  fi
  for tool in docker-registry jq podman buildah unshare ip; do
    command -v "$tool" >/dev/null || fail "$tool is missing (hack/lib.sh installs it)"
  done
  work=$(mktemp -d "${TMPDIR:-/tmp}/shardscaler-release-test.XXXXXX")
  cleanup() {
    CONTAINERS_STORAGE_CONF=$work/storage.conf timeout 60 podman rm -af -t 0 >/dev/null 2>&1 || true
    CONTAINERS_STORAGE_CONF=$work/storage.conf timeout 60 buildah rm -a >/dev/null 2>&1 || true
    awk -v d="$work/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r |
      while read -r m; do umount -l "$m" || true; done
    rm -rf --one-file-system "$work"
  }
  trap cleanup EXIT
  printf '[storage]\ndriver = "vfs"\nrunroot = "%s/run"\ngraphroot = "%s/graph"\n' \
    "$work" "$work" >"$work/storage.conf"
  export CONTAINERS_STORAGE_CONF=$work/storage.conf
  # Outside the namespace, where the apt sources are reachable: a cold run debootstraps the root
  # filesystem into the cache; the build inside then assembles from the cache.
  step "building the image (hack/image.sh)"
  timeout 900 "$root/hack/image.sh" --binary "$1" >/dev/null || fail "hack/image.sh failed"
  # The same probe as image_test.sh: can podman run anything here?
  probe=$work/probe
  for f in /usr/bin/true $(ldd /usr/bin/true | grep -o '/[^ ]*'); do
    install -D "$(readlink -f "$f")" "$probe$f"
  done
  if ! why=$(timeout 120 podman run --rm --network none --runtime runc \
    --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 --rootfs "$probe" /usr/bin/true 2>&1); then
    echo "SKIP: podman cannot run containers here ($(tail -1 <<<"$why"))"
    exit 77
  fi
  status=0
  unshare --net --fork -- "$0" --inside "$work" "$@" || status=$?
  exit "$status"
fi

# ---- inside the network namespace ----
work=$2
shardscaler=$(realpath "$3")
kube_testenv=$(realpath "$4")
emulator=$(realpath "$5")
export CONTAINERS_STORAGE_CONF=$work/storage.conf
pod_ip=10.200.0.1
registry=127.0.0.1:5000
ns=shardscaler-system
version=$(head -1 "$root/VERSION")
pids=()
container=shardscaler-release-test
stop_all() {
  timeout 60 podman rm -f -t 5 "$container" >/dev/null 2>&1 || true
  local pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do timeout 30 tail --pid="$pid" -f /dev/null || kill -KILL "$pid" || true; done
}
on_exit() {
  local status=$?
  if [ "$status" -ne 0 ]; then
    echo "---- shardscaler's log (the container) ----" >&2
    timeout 30 podman logs --tail 60 "$container" >&2 2>&1 || true
    for f in "$work"/*.log; do
      [ -e "$f" ] || continue
      echo "---- $(basename "$f") (tail) ----" >&2
      tail -20 "$f" >&2
    done
  fi
  stop_all
}
trap on_exit EXIT

# wait_for <seconds> <what> <command...>: runs the command every second until it succeeds.
wait_for() {
  local seconds=$1 what=$2
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || fail "$what: not within ${seconds}s"
    sleep 1
  done
}

ip link set lo up
ip addr add "$pod_ip/32" dev lo

step "the registry (docker-registry) on $registry"
mkdir -p "$work/registry"
cat >"$work/registry.yml" <<EOF
version: 0.1
log: {level: warn}
storage:
  filesystem: {rootdirectory: $work/registry}
http:
  addr: $registry
EOF
docker-registry serve "$work/registry.yml" >"$work/registry.log" 2>&1 &
pids+=($!)
wait_for 30 "the registry answering" curl -sf "http://$registry/v2/"

step "hack/image.sh --push $registry"
timeout 300 "$root/hack/image.sh" --binary "$shardscaler" --push "$registry" --tls-verify=false \
  >"$work/push.out" || fail "hack/image.sh --push failed"
grep -qx "pushed $registry/shardscaler:$version" "$work/push.out" || fail "$(cat "$work/push.out")"
curl -sf "http://$registry/v2/shardscaler/tags/list" | grep -q "\"$version\"" ||
  fail "the registry has no shardscaler:$version"

step "the control plane (Kubernetes 1.20, no kubelet)"
# The API server dials the Endpoints' address (no kube-proxy); no node lifecycle controller marks
# the pod not ready when the hand-made Node sends no heartbeats.
"$kube_testenv" up --dir "$work/control-plane" --ready-file "$work/ready" \
  --apiserver-flag --enable-aggregator-routing=true \
  --controller-manager-flag '--controllers=*,-nodelifecycle' >"$work/control-plane.log" 2>&1 &
pids+=($!)
wait_for 180 "the control plane" test -s "$work/ready"
KUBECONFIG=$(head -1 "$work/ready")
export KUBECONFIG
server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
api_port=${server##*:}

# The prerequisite README.md names: the Prometheus Operator's CRDs (its stand-ins for 1.20).
kubectl apply -f "$root/tests/support/crds" >/dev/null
wait_for 30 "the operator's CRDs" kubectl get prometheuses -A

step "hack/release.sh --registry $registry standalone | kubectl apply -f -"
"$root/hack/release.sh" --registry "$registry" standalone >"$work/standalone.yaml"
grep -q "image: $registry/shardscaler:$version" "$work/standalone.yaml" ||
  fail "the rendered manifest does not name $registry/shardscaler:$version"
kubectl apply -f "$work/standalone.yaml" >"$work/apply.out" 2>&1 || fail "$(cat "$work/apply.out")"
grep -c . "$work/apply.out" | xargs echo "objects applied:"
! kubectl get apiservice v1beta1.external.metrics.k8s.io >/dev/null 2>&1 ||
  fail "the standalone install registered the external metrics API"

step "playing the kubelet for one pod"
kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {kubernetes.io/os: linux, kubernetes.io/hostname: node-1}}
status:
  conditions: [{type: Ready, status: "True", reason: KubeletReady, message: played by the test}]
  addresses: [{type: InternalIP, address: $pod_ip}]
EOF
pod_of_deployment() {
  kubectl get pods -n "$ns" -l app.kubernetes.io/name=shardscaler \
    -o jsonpath='{.items[0].metadata.name}' | grep .
}
wait_for 60 "a pod of Deployment shardscaler" pod_of_deployment
pod=$(pod_of_deployment)
kubectl create -f - >/dev/null <<EOF
apiVersion: v1
kind: Binding
metadata: {name: $pod, namespace: $ns}
target: {apiVersion: v1, kind: Node, name: node-1}
EOF
kubectl get pod "$pod" -n "$ns" -o json >"$work/pod.json"
spec() { jq -r "$1" "$work/pod.json"; }
c='.spec.containers[] | select(.name == "shardscaler")'
image=$(spec "$c | .image")
[ "$image" = "$registry/shardscaler:$version" ] || fail "the pod runs $image"
mapfile -t args < <(spec "$c | .args[]")
user=$(spec ".spec.securityContext.runAsUser"):$(spec ".spec.securityContext.runAsGroup")
[ "$(spec "$c | .securityContext.readOnlyRootFilesystem")" = true ] ||
  fail "the container's root filesystem is writable"
run_flags=(--network host --user "$user" --read-only --runtime runc
  --ulimit nofile=1024:1024 --ulimit nproc=1024:1024
  # What a kubelet tells a pod about the API server (here: where it listens in this namespace).
  -e KUBERNETES_SERVICE_HOST=127.0.0.1 -e "KUBERNETES_SERVICE_PORT=$api_port")
while IFS=$'\t' read -r name value; do run_flags+=(-e "$name=$value"); done \
  < <(spec "$c | (.env // [])[] | select(.value != null) | [.name, .value] | @tsv")
# The Secret and ConfigMap volumes the container mounts, with their files as the kubelet writes them.
while IFS=$'\t' read -r volume path; do
  dir=$work/volumes/$volume
  mkdir -p "$dir"
  secret=$(spec ".spec.volumes[] | select(.name == \"$volume\") | .secret.secretName // empty")
  config_map=$(spec ".spec.volumes[] | select(.name == \"$volume\") | .configMap.name // empty")
  if [ -n "$secret" ]; then
    wait_for 60 "Secret $secret" kubectl get secret "$secret" -n "$ns"
    kubectl get secret "$secret" -n "$ns" -o json |
      jq -r '.data | to_entries[] | [.key, .value] | @tsv' |
      while IFS=$'\t' read -r key data; do base64 -d <<<"$data" >"$dir/$key"; done
  elif [ -n "$config_map" ]; then
    kubectl get configmap "$config_map" -n "$ns" -o json |
      jq -r '.data | to_entries[] | [.key, (.value | @base64)] | @tsv' |
      while IFS=$'\t' read -r key data; do base64 -d <<<"$data" >"$dir/$key"; done
  else
    fail "volume $volume is neither a Secret nor a ConfigMap"
  fi
  chmod -R a+rX "$dir"
  run_flags+=(-v "$dir:$path:ro")
done < <(spec "$c | .volumeMounts[] | [.name, .mountPath] | @tsv")
[ -s "$work/volumes/$(spec "$c | .volumeMounts[] | select(.mountPath == \"/var/run/secrets/kubernetes.io/serviceaccount\") | .name")/token" ] ||
  fail "the pod mounts no ServiceAccount token"

timeout 120 podman pull --quiet --tls-verify=false "$image" >/dev/null || fail "podman pull $image"
podman run -d --name "$container" "${run_flags[@]}" "$image" "${args[@]}" >/dev/null ||
  fail "podman run $image"
probe_port=$(spec "$c | .readinessProbe.httpGet.port as \$p | .ports[] | select(.name == \$p) | .containerPort")
probe_path=$(spec "$c | .readinessProbe.httpGet.path")
wait_for 120 "the container's readiness probe" curl -sf "http://127.0.0.1:$probe_port$probe_path"
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
kubectl patch pod "$pod" -n "$ns" --subresource=status --type=merge -p "$(jq -n \
  --arg ip "$pod_ip" --arg now "$now" --arg image "$image" '{status: {phase: "Running",
    hostIP: $ip, podIP: $ip, podIPs: [{ip: $ip}], startTime: $now,
    conditions: ([ "PodScheduled", "Initialized", "ContainersReady", "Ready" ] |
      map({type: ., status: "True", lastTransitionTime: $now})),
    containerStatuses: [{name: "shardscaler", ready: true, started: true, restartCount: 0,
      image: $image, imageID: "", state: {running: {startedAt: $now}}}]}}')" >/dev/null
webhook_endpoint() {
  kubectl get endpoints shardscaler-webhook -n "$ns" \
    -o jsonpath='{.subsets[0].addresses[0].ip}' | grep -qx "$pod_ip"
}
wait_for 60 "the Service shardscaler-webhook leading to the pod" webhook_endpoint
ca_bundle() {
  kubectl get validatingwebhookconfiguration shardscaler-guard \
    -o jsonpath='{.webhooks[*].clientConfig.caBundle}' | grep -q .
}
wait_for 60 "the caBundle injected by shardscaler" ca_bundle

step "a ShardSet scales (the operator emulator in the operator's place)"
"$emulator" --kubeconfig "$KUBECONFIG" >"$work/operator-emulator.log" 2>&1 &
pids+=($!)
kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata: {name: monitoring}
---
apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata: {name: main, namespace: monitoring}
spec: {shards: 1}
---
apiVersion: shardscaler.io/v1alpha1
kind: ShardSet
metadata: {name: main, namespace: monitoring}
spec:
  targetRef: {kind: Prometheus, name: main}
  shards: 1
  shardRetentionPolicy: {whenScaled: Retain, retain: {retentionPeriod: 1h}}
EOF
# settled <active> <retained>: the ShardSet reports them, and the target runs <active> shards,
# resumed. Counts of 0 may be left out of the status.
settled() {
  local got target
  got=$(kubectl get shardset main -n monitoring \
    -o jsonpath='{.status.shards}/{.status.retainedCount}/{.status.targetShards}')
  IFS=/ read -r active retained target_shards <<<"$got"
  [ "${active:-0}/${retained:-0}/${target_shards:-0}" = "$1/$2/$1" ] || return 1
  target=$(kubectl get prometheus main -n monitoring -o jsonpath='{.spec.shards}/{.spec.paused}')
  [ "$target" = "$1/" ] || [ "$target" = "$1/false" ]
}
wait_for 120 "ShardSet main at 1 active shard" settled 1 0
kubectl scale shardset main -n monitoring --replicas=3 >/dev/null
wait_for 120 "ShardSet main at 3 active shards" settled 3 0
kubectl scale shardset main -n monitoring --replicas=1 >/dev/null
wait_for 120 "ShardSet main at 1 active and 2 retained shards" settled 1 2
kubectl get shardsets -n monitoring
# The detaches went through the guard, which the API server called through the Service.
metrics=$(curl -sf "http://127.0.0.1:$(spec "$c | .ports[] | select(.name == \"metrics\") | .containerPort")/metrics")
reviews=$(awk '/^shardscaler_guard_reviews_total\{/ { s += $NF } END { print s + 0 }' <<<"$metrics")
[ "${reviews%.*}" -gt 0 ] || fail "the API server never called the guard"
echo "the guard answered $reviews reviews"

step "the HPA examples on Kubernetes 1.20"
kubectl apply --dry-run=server -k "$root/deploy/examples/autoscaling-v2beta2" >/dev/null ||
  fail "the autoscaling/v2beta2 HPA example is refused"
! kubectl apply --dry-run=server -f "$root/deploy/examples/hpa_samples_per_second.yaml" \
  >/dev/null 2>&1 || fail "1.20 serves autoscaling/v2: README.md says it does not"

step "uninstall as README.md says: the ShardSets, then the install"
kubectl delete shardsets --all -n monitoring --timeout=120s >/dev/null ||
  fail "the ShardSets were not released"
kubectl delete -f "$work/standalone.yaml" --wait=false >"$work/delete.out" 2>&1 ||
  fail "$(cat "$work/delete.out")"
# The kubelet's part of deleting the namespace: the pod it runs stops (SIGTERM, as a kubelet
# sends it) and is removed; the pods it never ran go without it.
pod_terminating() {
  kubectl get pod "$pod" -n "$ns" -o jsonpath='{.metadata.deletionTimestamp}' | grep -q .
}
wait_for 60 "pod $pod being deleted" pod_terminating
timeout 60 podman stop -t 30 "$container" >/dev/null || fail "the container did not stop"
kubectl delete pod "$pod" -n "$ns" --grace-period=0 --force >/dev/null 2>&1 || true
namespace_gone() { ! kubectl get namespace "$ns" >/dev/null 2>&1; }
wait_for 120 "namespace $ns deleted" namespace_gone
target=$(kubectl get prometheus main -n monitoring -o jsonpath='{.spec.shards}/{.spec.paused}')
[ "$target" = 1/ ] || [ "$target" = 1/false ] ||
  fail "the target was left paused or at another count ($target)"
for shard in prometheus-main-shard-1 prometheus-main-shard-2; do
  owner=$(kubectl get statefulset "$shard" -n monitoring \
    -o jsonpath='{.metadata.ownerReferences[*].kind}') || fail "retained shard $shard was deleted"
  [ "$owner" != ShardSet ] || fail "$shard still names the ShardSet as its owner"
  kubectl get events -n monitoring --field-selector reason=RetainedShardsOrphaned \
    -o jsonpath='{.items[*].message}' | grep -q "$shard" || fail "no Event names $shard"
done
crd_gone() { ! kubectl get crd shardsets.shardscaler.io >/dev/null 2>&1; }
wait_for 60 "the CRD deleted" crd_gone
! kubectl get validatingwebhookconfiguration shardscaler-guard >/dev/null 2>&1 ||
  fail "the webhook configuration is left"
! kubectl get apiservice v1beta1.external.metrics.k8s.io >/dev/null 2>&1 ||
  fail "an APIService is left"
echo "PASS: $image from $registry installed, scaled 1 -> 3 -> 1, uninstalled"
