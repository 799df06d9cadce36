#!/usr/bin/env bash
# Starts a local Kubernetes control plane (etcd + kube-apiserver + kube-controller-manager
# v1.20.2 on loopback) and keeps it running until SIGTERM/SIGINT/Ctrl-C, then tears it down.
# Works in the foreground and backgrounded (`up.sh --ready-file F &`, then wait for F).
#
# usage: up.sh [--dir DIR] [--ready-file FILE] [other `kube-testenv up` flags...]
#   --dir DIR        work directory (default: a fresh one under the testenv root, swept later)
#   --ready-file F   written (with the kubeconfig path) once the control plane is ready, removed on
#                    shutdown
# Prints the kubeconfig path; DIR/testenv.env holds KUBECONFIG, the server, CA and tokens.
#
# Steps: tests/control-plane/build.sh (binaries, cached), builds the kube-testenv CLI in
# ${SHARDSCALER_BUILD_DIR:-<repo>/build} unless SHARDSCALER_KUBE_TESTENV names one, sweeps
# leftovers of killed runs, then becomes kube-testenv (exec), so signals reach it directly.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "${here}/../.." && pwd)"

# Until the exec, a signal stops the step in progress (its whole process group) and exits.
step_pid=""
on_signal() {
  if [[ -n ${step_pid} ]]; then
    kill -TERM -- "-${step_pid}" 2>/dev/null || true
    wait "${step_pid}" 2>/dev/null || true
  fi
  exit 130
}
trap on_signal TERM INT HUP

run_step() {
  setsid "$@" &
  step_pid=$!
  local rc=0
  wait "${step_pid}" || rc=$?
  step_pid=""
  return "${rc}"
}

bin_file="$(mktemp)"
trap 'rm -f "${bin_file}"' EXIT
run_step "${here}/build.sh" >"${bin_file}"
SHARDSCALER_KUBE_BIN_DIR="$(cat "${bin_file}")"
export SHARDSCALER_KUBE_BIN_DIR

kube_testenv="${SHARDSCALER_KUBE_TESTENV:-}"
if [[ -z ${kube_testenv} ]]; then
  build_dir="${SHARDSCALER_BUILD_DIR:-${repo}/build}"
  if [[ ! -f "${build_dir}/CMakeCache.txt" ]]; then
    generator=()
    command -v ninja >/dev/null && generator=(-G Ninja)
    run_step cmake -S "${repo}" -B "${build_dir}" "${generator[@]}" >&2
  fi
  run_step cmake --build "${build_dir}" --target kube-testenv --parallel 2 >&2
  kube_testenv="${build_dir}/tests/support/testenv/kube-testenv"
fi
[[ -x ${kube_testenv} ]] || {
  echo "up.sh: ${kube_testenv} is not an executable" >&2
  exit 1
}

run_step "${here}/sweep.sh"

args=("$@")
has_dir=0
for arg in "${args[@]}"; do
  [[ ${arg} == --dir ]] && has_dir=1
done
if [[ ${has_dir} -eq 0 ]]; then
  root="${SHARDSCALER_TESTENV_ROOT:-${TMPDIR:-/tmp}/shardscaler-testenv}"
  mkdir -p "${root}"
  args+=(--dir "$(mktemp -d "${root}/up-XXXXXX")")
fi

rm -f "${bin_file}"
trap - TERM INT HUP EXIT
exec "${kube_testenv}" up "${args[@]}"
