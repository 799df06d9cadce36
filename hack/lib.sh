# Shared by hack/*.sh: package installation and paths. Sourced, never run.

SHARDSCALER_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHARDSCALER_CACHE_DIR=${SHARDSCALER_CACHE_DIR:-$HOME/.cache/shardscaler}
export SHARDSCALER_CACHE_DIR

log() { printf '\n==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Packages, all from Debian's archive: what building the shardscaler binary needs (the image's
# build stage installs only these), and what the tests, lint, fuzzing and benchmarks add (gnuplot:
# the demo's picture; docker-registry: the registry on loopback the release test pushes the image
# to and pulls it from; jq: that test's reading of pods and Secrets).
SHARDSCALER_BUILD_PACKAGES=(
  cmake ninja-build g++ pkg-config git ca-certificates
  libcurl4-openssl-dev libssl-dev nlohmann-json3-dev libyaml-cpp-dev libspdlog-dev
  libboost-dev libboost-system-dev prometheus-cpp-dev libcli11-dev libsimdjson-dev
)
SHARDSCALER_TEST_PACKAGES=(
  curl openssl ccache clang-format clang-tidy-16 clang-16 libclang-rt-16-dev
  libgtest-dev libgmock-dev libbenchmark-dev librapidcheck-dev
  etcd-server prometheus zlib1g-dev iproute2
  gnuplot-nox
  docker-registry jq
)
# hack/image.sh and its test: the image is built with buildah from a debootstrap root filesystem
# and run with podman; runc, because crun refuses the cgroup v1+v2 hybrid some CI sandboxes mount.
SHARDSCALER_IMAGE_PACKAGES=(buildah podman runc debootstrap binutils)
SHARDSCALER_PACKAGES=("${SHARDSCALER_BUILD_PACKAGES[@]}" "${SHARDSCALER_TEST_PACKAGES[@]}"
  "${SHARDSCALER_IMAGE_PACKAGES[@]}")

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else die "installing packages needs root (or sudo): $*"; fi
}

# ensure_packages pkg...: installs only what is missing; runs apt-get update first when it must.
ensure_packages() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing Debian packages: ${missing[*]}"
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# kubectl is on every machine this project targets; Debian's kubernetes-client is the fallback.
ensure_kubectl() {
  command -v kubectl >/dev/null || ensure_packages kubernetes-client
}

# configure <build dir> [cmake args...]: Ninja, and ccache with its cache outside the clone, so a
# fresh clone (what CI builds) compiles only what changed since the last run on this machine.
configure() {
  local dir=$1
  shift
  export CCACHE_DIR="$SHARDSCALER_CACHE_DIR/ccache"
  export CCACHE_BASEDIR="$SHARDSCALER_ROOT"  # paths inside the clone hash alike in every clone
  export CCACHE_NOHASHDIR=true               # ... also with -g, which records the directory
  export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
  cmake -S "$SHARDSCALER_ROOT" -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER_LAUNCHER=ccache "$@" >/dev/null
}
