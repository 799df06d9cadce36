#!/usr/bin/env bash
# Cleans up after test control planes whose owner is gone (killed test runs): kills every process
# whose command line mentions such a work directory (etcd, kube-apiserver, kube-controller-manager)
# and removes the directory. Directories of live owners are left alone.
#
# usage: sweep.sh [WORK_DIR...]
#   Without arguments: every directory under
#   ${SHARDSCALER_TESTENV_ROOT:-${TMPDIR:-/tmp}/shardscaler-testenv}, which is removed once
#   ownerless. A directory marked "kept" (logs of a failed run) loses only its etcd data, and is
#   removed after 7 days. One with no owner mark yet is left alone for its first minute (it may be
#   being set up right now). A WORK_DIR named on the command line (e.g. kube-testenv up --dir) is
#   never removed, only its processes and etcd data.
set -euo pipefail

readonly ROOT="${SHARDSCALER_TESTENV_ROOT:-${TMPDIR:-/tmp}/shardscaler-testenv}"

# Prints "<state> <starttime>" of a pid (fields 3 and 22 of /proc/<pid>/stat), or nothing.
proc_state_and_start() {
  local stat rest fields
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 0
  rest="${stat##*) }" # the command name in parentheses may hold spaces
  read -ra fields <<<"${rest}"
  echo "${fields[0]} ${fields[19]}"
}

owner_alive() {
  local dir="$1" pid start state now_start
  [[ -r "${dir}/owner" ]] || return 1
  read -r pid start <"${dir}/owner" || return 1
  [[ ${pid} =~ ^[0-9]+$ ]] || return 1
  read -r state now_start <<<"$(proc_state_and_start "${pid}")" || return 1
  [[ -n ${state:-} && ${state} != Z && ${state} != X && ${now_start} == "${start}" ]]
}

# Pids of live processes (not this script) whose command line contains $1.
processes_mentioning() {
  local needle="$1" proc pid
  for proc in /proc/[0-9]*; do
    pid="${proc#/proc/}"
    [[ ${pid} == "$$" || ${pid} == "${BASHPID}" ]] && continue
    if tr '\0' ' ' 2>/dev/null <"${proc}/cmdline" | grep -qF -- "${needle}"; then
      echo "${pid}"
    fi
  done
}

kill_processes_of() {
  local needle="$1/" pids pid i
  mapfile -t pids < <(processes_mentioning "${needle}")
  [[ ${#pids[@]} -eq 0 ]] && return 0
  echo "sweep.sh: killing ${#pids[@]} leftover process(es) of $1: ${pids[*]}" >&2
  for pid in "${pids[@]}"; do
    kill -KILL "${pid}" 2>/dev/null || true
  done
  # SIGKILL is not instant; bounded wait so the directory is not removed under a live process.
  for ((i = 0; i < 50; i++)); do
    mapfile -t pids < <(processes_mentioning "${needle}")
    [[ ${#pids[@]} -eq 0 ]] && return 0
    sleep 0.1
  done
  echo "sweep.sh: warning: still running after SIGKILL: ${pids[*]}" >&2
}

sweep_dir() {
  local dir mode="$2"
  dir="$(realpath -m "$1")"
  [[ -d ${dir} ]] || return 0
  owner_alive "${dir}" && return 0
  if [[ ${mode} == owned && ! -e "${dir}/owner" && ! -e "${dir}/kept" &&
    -n "$(find "${dir}" -maxdepth 0 -mmin -1)" ]]; then
    return 0
  fi
  kill_processes_of "${dir}"
  if [[ ${mode} == given ]]; then
    rm -rf "${dir}/etcd-data" "${dir}/owner" "${dir}/pids"
  elif [[ -e "${dir}/kept" ]]; then
    rm -rf "${dir}/etcd-data"
    if [[ -n "$(find "${dir}/kept" -mtime +7)" ]]; then
      rm -rf "${dir}"
    fi
  else
    rm -rf "${dir}"
  fi
}

main() {
  local dir
  if [[ $# -gt 0 ]]; then
    for dir in "$@"; do
      sweep_dir "${dir}" given
    done
    return 0
  fi
  [[ -d ${ROOT} ]] || return 0
  for dir in "${ROOT}"/*/; do
    [[ -d ${dir} ]] && sweep_dir "${dir%/}" owned
  done
  return 0
}

main "$@"
