# Shared by hack/*.sh: package installation and paths. Sourced, never run.

SHARDSCALER_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHARDSCALER_CACHE_DIR=${SHARDSCALER_CACHE_DIR:-$HOME/.cache/shardscaler}
export SHARDSCALER_CACHE_DIR

log() { printf '\n==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Step times. A script that times its steps sets SHARDSCALER_STEP_LOG to a file (scripts it starts
# inherit it and add their steps there); step_record appends one step, steps_table prints them all.
# The 1-minute load average at each step's end goes with it: on a shared machine it says how much
# of a step's time was its own.
# step_record <name> <start epoch s> <end epoch s> <result>
step_record() {
  [ -n "${SHARDSCALER_STEP_LOG:-}" ] || return 0
  printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$(cut -d' ' -f1 /proc/loadavg)" \
    >>"$SHARDSCALER_STEP_LOG"
}
# steps_table <epoch s the run started>: the recorded steps in order of start, times as m:ss.
steps_table() {
  [ -s "${SHARDSCALER_STEP_LOG:-}" ] || return 0
  sort -t $'\t' -k2,2n -s "$SHARDSCALER_STEP_LOG" | awk -F '\t' -v t0="$1" -v now="$(date +%s)" '
    function mmss(s) { return sprintf("%d:%02d", int(s / 60), s % 60) }
    BEGIN { printf "%-58s %7s %7s  %-6s %s\n", "step", "start", "took", "load", "result" }
    { printf "%-58s %7s %7s  %-6s %s\n", $1, mmss($2 - t0), mmss($3 - $2), $5, $4 }
    END { printf "%-58s %7s %7s\n", "total", "", mmss(now - t0) }'
}

# Packages, all from Debian's archive: what building the shardscaler binary needs (the image's
# build stage installs only these); what the demo adds (the project configured with its tests and
# benchmarks, ccache, lld, and the servers it runs: etcd, Prometheus, `ip` for its network
# namespace, gnuplot for its picture); what only the test command adds (lint, fuzzing;
# docker-registry: the registry on loopback the release test pushes the image to and pulls it
# from; jq: that test's reading of pods and Secrets); and the image's tools.
SHARDSCALER_BUILD_PACKAGES=(
  cmake ninja-build g++ pkg-config git ca-certificates
  libcurl4-openssl-dev libssl-dev nlohmann-json3-dev libyaml-cpp-dev libspdlog-dev
  libboost-dev libboost-system-dev prometheus-cpp-dev libcli11-dev libsimdjson-dev
)
SHARDSCALER_DEMO_PACKAGES=(
  ccache lld libgtest-dev libgmock-dev libbenchmark-dev librapidcheck-dev zlib1g-dev
  etcd-server prometheus iproute2 gnuplot-nox
)
SHARDSCALER_TEST_PACKAGES=(
  curl openssl clang-format clang-tidy-16 clang-16 libclang-rt-16-dev
  docker-registry jq
)
# hack/image.sh and its test: the image is built with buildah from a debootstrap root filesystem
# and run with podman; runc, because crun refuses the cgroup v1+v2 hybrid some CI sandboxes mount.
SHARDSCALER_IMAGE_PACKAGES=(buildah podman runc debootstrap binutils)
SHARDSCALER_PACKAGES=("${SHARDSCALER_BUILD_PACKAGES[@]}" "${SHARDSCALER_DEMO_PACKAGES[@]}"
  "${SHARDSCALER_TEST_PACKAGES[@]}" "${SHARDSCALER_IMAGE_PACKAGES[@]}")

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
  # lld links a test binary with its debug info in a third of ld.bfd's CPU time (measured on an
  # e2e binary: 1.1 against 3.0 CPU-s), and no link is cached: every build links every binary.
  local linker=()
  command -v ld.lld >/dev/null && linker=(-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld)
  cmake -S "$SHARDSCALER_ROOT" -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    "${linker[@]}" "$@" >/dev/null
}

# configure_main_build [cmake args...]: build/, which the demo, the test command and the soak
# share with the same flags, so that each finds the others' objects in ccache. RelWithDebInfo
# with line tables only (-g1): backtraces and profiles keep functions, files and lines, and the
# compile takes a quarter less time than with full debug information (-g).
configure_main_build() {
  configure build -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "$@"
}

# fuzz_targets [NAME...]: the fuzz targets' build targets, of the names given or of every one.
fuzz_targets() {
  local names=("$@")
  [ ${#names[@]} -gt 0 ] ||
    mapfile -t names < <(cd "$SHARDSCALER_ROOT/tests/fuzz" && ls -1 -- *_fuzz.cc | sed 's/_fuzz\.cc$//')
  printf 'fuzz_%s\n' "${names[@]}"
}

# SHARDSCALER_UNITY_ARGS: what the sanitizer builds (configure_checks_build, the TSan build of
# hack/checks.sh) pass to cmake for a unity build, eight sources a file: most of a test source's
# compile time is the headers it shares with the others (the controller's ten unit test sources:
# 82 CPU-s one by one, 21 in one file). CONTRIBUTING says how sources of one target keep apart. A
# unity file includes its sources by absolute path, so __FILE__ (every gtest assertion) would name
# the clone and no other clone would find the object in ccache: -fmacro-prefix-map makes it
# repo-relative.
SHARDSCALER_UNITY_ARGS=(-DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8
  "-DCMAKE_CXX_FLAGS=-fmacro-prefix-map=$SHARDSCALER_ROOT/=")

# configure_checks_build: the one sanitizer build that the unit run and the fuzz targets share
# (hack/checks.sh, hack/fuzz.sh), in build-checks: clang, ASan and UBSan on every library with
# libFuzzer's coverage, so that each object is compiled once for both. The code under test at -O1,
# as AddressSanitizer's documentation advises: at -O0 clang's frames are large enough that
# std::regex's recursion over the longest URL the ingestion policy accepts (2 KiB) exhausts the
# 8 MiB stack. The tests' own sources at -O0: they take two thirds of its compile time at -O1, and
# about half as long at -O0. A unity build (SHARDSCALER_UNITY_ARGS).
SHARDSCALER_CHECKS_BUILD=build-checks
configure_checks_build() {
  local clang
  clang=$(command -v clang++-16) || die "clang++-16 is missing (package clang-16)"
  configure "$SHARDSCALER_CHECKS_BUILD" -DCMAKE_CXX_COMPILER="$clang" -DCMAKE_BUILD_TYPE=Debug \
    "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g" -DSHARDSCALER_TEST_CXX_FLAGS=-O0 -DSHARDSCALER_FUZZ=ON \
    -DSHARDSCALER_BUILD_BENCH=OFF "${SHARDSCALER_UNITY_ARGS[@]}"
}

# ensure_free_space <dir> <GiB>: fails, naming the directory and both numbers, when the file
# system holding the directory has less than that much space free.
ensure_free_space() {
  local dir=$1 need=$2 have
  mkdir -p "$dir"
  have=$(df --output=avail -B1G "$dir" | tail -1 | tr -d ' ')
  [ "$have" -ge "$need" ] ||
    die "$dir is on a file system with ${have} GiB free; this run needs ${need} GiB: free some space (old build directories, /tmp) and run again"
}

# timed <name> <command...>: runs the command as one step of the table; returns its status.
timed() {
  local name=$1 start status=0
  shift
  start=$(date +%s)
  "$@" || status=$?
  step_record "$name" "$start" "$(date +%s)" "$(step_result "$status")"
  return "$status"
}
step_result() { if [ "$1" -eq 0 ]; then echo ok; else echo "failed ($1)"; fi; }
