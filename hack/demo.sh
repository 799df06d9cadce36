#!/usr/bin/env bash
# The main job: installs what is missing, builds shardscaler, and starts the local Kubernetes
# control plane (etcd + kube-apiserver + kube-controller-manager on loopback), printing how to
# point kubectl at it. Runs until Ctrl-C, then tears everything down.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$SHARDSCALER_ROOT"

log "packages"
ensure_packages "${SHARDSCALER_PACKAGES[@]}"
ensure_kubectl

log "build"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target shardscaler kube-testenv

log "control plane (the first run builds Kubernetes 1.20.2 from Debian's source: ~10 minutes)"
exec tests/control-plane/up.sh
