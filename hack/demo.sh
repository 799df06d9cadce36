#!/usr/bin/env bash
# The main job: installs what is missing, builds shardscaler, then runs the demo: a local
# Kubernetes control plane (etcd + kube-apiserver + kube-controller-manager 1.20 on loopback),
# the Prometheus Operator emulator, real Prometheus shard processes and shardscaler; it scales
# down with Retain, back up, lets a deadline pass, then lets the real HPA scale the ShardSet on
# ingestion through shardscaler's external metrics API, printing a timeline, and exits 0 when every
# step happened as it should. Everything is torn down at the end; the picture of the run (shards,
# samples/s, the HPA's decisions) stays in build/demo/shardscaler-demo.png, whose path it prints
# last. It runs in a network namespace of its own (the aggregator needs a non-loopback address for
# shardscaler), so it needs root.
#
# usage: hack/demo.sh [--keep]   --keep: stay up after the last step until Ctrl-C; kubectl reaches
#                                the cluster with the kubeconfig the demo prints (a relay on the
#                                host's loopback carries it into the demo's namespace)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$SHARDSCALER_ROOT"

log "packages"
# Only what the demo needs: no linters, fuzzing or image tools.
ensure_packages "${SHARDSCALER_BUILD_PACKAGES[@]}" "${SHARDSCALER_DEMO_PACKAGES[@]}"
ensure_kubectl

log "control-plane binaries (the first run builds Kubernetes 1.20.2 from Debian's source: ~6-10 min)"
SHARDSCALER_KUBE_BIN_DIR=$(tests/control-plane/build.sh)
export SHARDSCALER_KUBE_BIN_DIR
tests/control-plane/sweep.sh

log "build"
configure_main_build
cmake --build build -j"$(nproc)" --target shardscaler shardscaler-demo

log "demo"
exec build/bin/shardscaler-demo --plot-dir "$SHARDSCALER_ROOT/build/demo" "$@"
