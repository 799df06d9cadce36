#!/usr/bin/env bash
# Builds kube-apiserver and kube-controller-manager v1.20.2 from Debian bookworm's `kubernetes`
# source package (docs/design/testing.md) into a per-version cache outside the clone, and makes sure
# the other programs the test control plane runs (etcd, kubectl) are installed.
#
# Prints the directory holding the binaries on stdout (everything else goes to stderr), so
#   SHARDSCALER_KUBE_BIN_DIR=$(tests/control-plane/build.sh)
# works. A no-op (a second or so) once the cache holds binaries that report the right version.
#
# Environment:
#   SHARDSCALER_CACHE_DIR  cache root (default: $HOME/.cache/shardscaler); binaries land in
#                          $SHARDSCALER_CACHE_DIR/kube-v1.20.2-r<recipe revision>/
# Needs root (or sudo) only when something has to be installed with apt-get.
set -euo pipefail

readonly KUBE_VERSION=1.20.2
# Bumped whenever the recipe changes what the binaries do, so a stale cache is rebuilt.
readonly RECIPE_REVISION=2
readonly BINARIES=(kube-apiserver kube-controller-manager)
readonly CACHE_ROOT="${SHARDSCALER_CACHE_DIR:-${HOME:?HOME is not set}/.cache/shardscaler}"
readonly BIN_DIR="${CACHE_ROOT}/kube-v${KUBE_VERSION}-r${RECIPE_REVISION}"
readonly DEB_SRC_STEM=/etc/apt/sources.list.d/shardscaler-deb-src

# A signal must still run the EXIT trap that removes the half-built tree.
trap 'exit 143' TERM
trap 'exit 130' INT

log() { echo "build.sh: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}

cache_is_valid() {
  local bin
  for bin in "${BINARIES[@]}"; do
    [[ -x "${BIN_DIR}/${bin}" ]] || return 1
    [[ "$(timeout 30 "${BIN_DIR}/${bin}" --version 2>/dev/null)" == "Kubernetes v${KUBE_VERSION}" ]] ||
      return 1
  done
}

as_root() {
  if [[ ${EUID} -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null; then
    sudo "$@"
  else
    die "need root to run: $*"
  fi
}

package_installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed" ]]
}

apt_updated=0
apt_update_once() {
  if [[ ${apt_updated} -eq 0 ]]; then
    log "apt-get update"
    as_root apt-get update -qq >&2
    apt_updated=1
  fi
}

apt_install() {
  local missing=() pkg
  for pkg in "$@"; do
    package_installed "${pkg}" || missing+=("${pkg}")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  apt_update_once
  log "apt-get install ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >&2
}

# Programs the launcher runs: etcd from Debian, and kubectl. A machine may already carry a newer
# kubectl from elsewhere; only when there is none does Debian's kubernetes-client provide it.
install_runtime_dependencies() {
  apt_install etcd-server
  if ! command -v kubectl >/dev/null; then
    apt_install kubernetes-client
  fi
}

# deb-src entries derived from the machine's own Debian sources (never a host name of ours):
# deb822 "Types: deb" stanzas of debian.sources, or classic "deb " lines of sources.list that
# point at a Debian archive.
write_deb_src_entries() {
  local deb822=/etc/apt/sources.list.d/debian.sources classic=/etc/apt/sources.list
  local content="" target=""
  if [[ -f ${deb822} ]] && grep -qE '^Types:.*\<deb\>' "${deb822}"; then
    content="$(sed -E 's/^Types:.*$/Types: deb-src/' "${deb822}")"
    target="${DEB_SRC_STEM}.sources"
  elif [[ -f ${classic} ]]; then
    content="$(grep -E '^[[:space:]]*deb[[:space:]]' "${classic}" |
      grep -E '/debian(-security)?/?[[:space:]]' |
      sed -E 's/^[[:space:]]*deb[[:space:]]/deb-src /' || true)"
    target="${DEB_SRC_STEM}.list"
  fi
  [[ -n ${content} ]] ||
    die "found no Debian 'deb' entry to derive 'deb-src' from (looked at ${deb822} and ${classic})"
  if [[ ! -f ${target} ]] || [[ "$(cat "${target}")" != "${content}" ]]; then
    log "writing ${target}"
    printf '%s\n' "${content}" | as_root tee "${target}" >/dev/null
    apt_updated=0
    apt_update_once
  fi
}

ensure_source_index() {
  if apt-cache showsrc kubernetes 2>/dev/null | grep -q '^Package: kubernetes$'; then
    return 0
  fi
  write_deb_src_entries
  if ! apt-cache showsrc kubernetes 2>/dev/null | grep -q '^Package: kubernetes$'; then
    apt_updated=0
    apt_update_once
  fi
  apt-cache showsrc kubernetes 2>/dev/null | grep -q '^Package: kubernetes$' ||
    die "apt knows no source package 'kubernetes' even with deb-src entries"
}

build_binaries() {
  local work="$1" start=${SECONDS}
  cd "${work}"
  log "fetching the kubernetes source package into ${work}"
  apt-get source --download-only kubernetes >&2
  dpkg-source -x kubernetes_*.dsc src >&2

  # The vendored reflect2 1.0.1 reads runtime internals that changed in Go 1.18 and crashes at
  # start-up; Debian's 1.0.2 is API-compatible and knows both layouts.
  local reflect2=/usr/share/gocode/src/github.com/modern-go/reflect2
  [[ -f ${reflect2}/reflect2.go ]] || die "${reflect2} is missing (golang-github-modern-go-reflect2-dev)"
  rm -rf src/vendor/github.com/modern-go/reflect2
  cp -r "${reflect2}" src/vendor/github.com/modern-go/

  # The OpenAPI type validator (CRD schemas) asks "is this the zero value?" by comparing two
  # reflect.Value structs. Under the Go 1.15 that 1.20 was released with, that was only ever
  # true for nil; since Go 1.18 reflect.Zero shares one zero buffer, so "" and 0 compare equal
  # and a CRD string field holding "" is rejected as null. Restore the released behaviour.
  local validator
  for validator in src/vendor/k8s.io/kube-openapi/pkg/validation/validate/type.go \
    src/vendor/github.com/go-openapi/validate/type.go; do
    grep -q 'data == nil || reflect.DeepEqual(reflect.Zero(reflect.TypeOf(data)), reflect.ValueOf(data))' \
      "${validator}" || die "${validator}: the zero-value check to patch is not there"
    sed -i 's/data == nil || reflect.DeepEqual(reflect.Zero(reflect.TypeOf(data)), reflect.ValueOf(data))/data == nil/' \
      "${validator}"
  done

  mkdir -p src/.go/src/k8s.io
  ln -sfn ../../.. src/.go/src/k8s.io/kubernetes
  mkdir -p home
  log "make WHAT='cmd/kube-apiserver cmd/kube-controller-manager' (about 5-6 minutes on 2 cores)"
  (cd src && env GOPATH="${PWD}/.go" CGO_ENABLED=0 HOME="${work}/home" GOFLAGS= GOPROXY=off \
    make WHAT="cmd/kube-apiserver cmd/kube-controller-manager" >&2)

  mkdir -p out
  local bin
  for bin in "${BINARIES[@]}"; do
    install -m 0755 "src/_output/bin/${bin}" "out/${bin}"
    local version
    version="$(out/"${bin}" --version)"
    [[ ${version} == "Kubernetes v${KUBE_VERSION}" ]] || die "${bin} reports '${version}', want v${KUBE_VERSION}"
  done
  log "built in $((SECONDS - start)) s"
}

main() {
  mkdir -p "${CACHE_ROOT}"
  if cache_is_valid; then
    install_runtime_dependencies
    echo "${BIN_DIR}"
    return 0
  fi

  # One builder at a time per cache; a second caller waits, then finds the cache filled.
  exec 9>"${BIN_DIR}.lock"
  flock 9
  if cache_is_valid; then
    install_runtime_dependencies
    echo "${BIN_DIR}"
    return 0
  fi

  apt_install golang-go make dpkg-dev xz-utils rsync jq golang-github-modern-go-reflect2-dev
  install_runtime_dependencies
  ensure_source_index

  local work
  work="$(mktemp -d "${BIN_DIR}.build.XXXXXX")"
  # shellcheck disable=SC2064  # expand now: the path is fixed
  trap "rm -rf '${work}'" EXIT
  build_binaries "${work}"

  # The cache directory appears whole or not at all: rename(2) within one file system.
  rm -rf "${BIN_DIR}"
  mv -T "${work}/out" "${BIN_DIR}"
  cache_is_valid || die "binaries in ${BIN_DIR} do not run"
  echo "${BIN_DIR}"
}

main "$@"
