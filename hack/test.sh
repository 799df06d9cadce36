#!/usr/bin/env bash
# Runs every test: installs what is missing, builds, checks formatting, runs the tools,
# integration and end-to-end tests and builds and runs the image (hack/image.sh), while
# hack/checks.sh runs clang-tidy, the unit tests under ASan+UBSan, the concurrent parts under TSan
# and each fuzz target for a bounded time. At the end it prints each step's time as a table.
# Usage: hack/test.sh            (CI runs exactly this through .ci/run)
# Env:   SHARDSCALER_CACHE_DIR   cache outside the clone (default ~/.cache/shardscaler)
#        SHARDSCALER_TEST_LABELS ctest labels to run beside the checks (default:
#                                tools|integration|e2e|image)
#        SHARDSCALER_FUZZ_SECONDS how long each fuzz target runs (default 15)
#        SHARDSCALER_MIN_FREE_GIB free space the clone's file system needs at the start (default 20)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$SHARDSCALER_ROOT"

jobs=$(nproc)
started=$(date +%s)
SHARDSCALER_STEP_LOG=$(mktemp)
export SHARDSCALER_STEP_LOG
current_step=
current_start=
# step <name>: ends the step in progress, as passed, and starts the next.
step() {
  step_done ok
  current_step=$1
  current_start=$(date +%s)
  log "$1 (at $((current_start - started))s)"
}
step_done() {
  [ -n "$current_step" ] || return 0
  step_record "$current_step" "$current_start" "$(date +%s)" "$1"
  current_step=
}

step "free disk space"
# A run writes about 15 GiB into the clone (build/ and the two sanitizer builds beside it);
# a full disk shows up late and obscurely, as the linker dying with SIGBUS or a server's write
# failing, so it is refused here, before anything starts.
ensure_free_space "$SHARDSCALER_ROOT" "${SHARDSCALER_MIN_FREE_GIB:-20}"
ensure_free_space "$(dirname "$SHARDSCALER_CACHE_DIR")" 5

step "packages"
ensure_packages "${SHARDSCALER_PACKAGES[@]}"
ensure_kubectl

step "control-plane binaries (cached in $SHARDSCALER_CACHE_DIR)"
tests/control-plane/build.sh
tests/control-plane/sweep.sh

checks_pid=
image_pid=
rootfs_pid=
cleanup() {
  local status=$? pid
  if [ "$status" -eq 0 ]; then step_done ok; else step_done "failed ($status)"; fi
  for pid in $checks_pid $image_pid $rootfs_pid; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  tests/control-plane/sweep.sh || true
  log "step times (load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
  steps_table "$started" >&2
  rm -f "$SHARDSCALER_STEP_LOG"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step "format check"
mapfile -t cxx_files < <(git ls-files '*.cc' '*.h')
if ! clang-format --dry-run --Werror "${cxx_files[@]}"; then
  die "clang-format would change the files above: run clang-format -i on them"
fi

# beside <pid variable> <niceness> <log> <step name> <command...>: starts a job in a process
# group of its own at that CPU priority, its output in the log; its time is a step of the table.
beside() {
  local var=$1 niceness=$2 out=$3 name=$4
  shift 4
  log "$name: starts beside the tests; log: $out"
  setsid -w nice -n "$niceness" bash -c 'source hack/lib.sh && timed "$@"' _ "$name" "$@" \
    >"$out" 2>&1 &
  printf -v "$var" %s "$!"
}
# wait_beside <pid> <log> <what>: waits for a job started beside the tests, prints its log, and
# fails the run when it failed.
wait_beside() {
  local status=0
  wait "$1" || status=$?
  cat "$2" >&2
  [ "$status" -eq 0 ] || die "$3 failed (exit $status; its log is above)"
}
labels=${SHARDSCALER_TEST_LABELS:-tools|integration|e2e|image}
if [[ image =~ ^($labels)$ ]] && [ "$(id -u)" -eq 0 ]; then
  # A cold run debootstraps the image's root filesystem into the cache: minutes of downloading and
  # unpacking, and longer beside the server tests than the image test's own time limit allows.
  # Begun beside the build, it is done or nearly done when the image test starts, which waits for
  # it (hack/image.sh lets one run at a time make it); a warm run finds it at once.
  mkdir -p build
  beside rootfs_pid 10 build/rootfs.log "image root filesystem (beside the build, nice 10)" \
    hack/image.sh --rootfs-only
fi

step "build (RelWithDebInfo)"
# The unit tests are built and run once, under ASan+UBSan, by hack/checks.sh.
configure_main_build -DSHARDSCALER_UNIT_TESTS_IN_ALL=OFF
cmake --build build -j"$jobs"

# The checks that only compute (clang-tidy, the sanitizer builds and runs, fuzzing) run at the
# lowest CPU priority beside the tests below, so the server tests get the CPU first and the checks
# take what they leave.
step_done ok
beside checks_pid 19 build/checks.log "checks (hack/checks.sh, beside, nice 19)" \
  hack/checks.sh build

if [[ image =~ ^($labels)$ ]]; then
  beside image_pid 10 build/image.log "image and release tests (beside, nice 10)" \
    ctest --test-dir build -L '^image$' --output-on-failure --no-tests=error
fi
server_labels=$(tr '|' '\n' <<<"$labels" | grep -xE 'tools|integration|e2e' | paste -sd '|' || true)
if [ -n "$server_labels" ]; then
  # One per core, at least two, and one more. Each starts its own servers, and those servers use
  # CPU too: a third lane makes each test slower, but the lanes together finish sooner. Those
  # whose outcome depends on timing run one at a time, at a higher CPU priority than the others
  # (SERIAL in cmake/ShardscalerTesting.cmake), so the extra lane is the others'.
  # ctest starts the longest first when it has their times from an earlier run; the cache keeps
  # them for the next clone.
  parallel=$((jobs < 2 ? 3 : jobs + 1))
  step "ctest: ${server_labels//|/, } ($parallel at a time)"
  costs=$SHARDSCALER_CACHE_DIR/ctest/CTestCostData.txt
  mkdir -p build/Testing/Temporary "$(dirname "$costs")"
  [ ! -f "$costs" ] || cp "$costs" build/Testing/Temporary/CTestCostData.txt
  status=0
  ctest --test-dir build -L "^($server_labels)\$" -j"$parallel" --output-on-failure \
    --no-tests=error || status=$?
  cp build/Testing/Temporary/CTestCostData.txt "$costs" 2>/dev/null || true
  [ "$status" -eq 0 ] || exit "$status"
fi

if [ -n "$image_pid" ]; then
  step "waiting for the image test"
  if [ -n "$rootfs_pid" ]; then
    wait_beside "$rootfs_pid" build/rootfs.log "hack/image.sh --rootfs-only"
    rootfs_pid=
  fi
  wait_beside "$image_pid" build/image.log "the image test"
  image_pid=
fi
step "waiting for the checks"
wait_beside "$checks_pid" build/checks.log "hack/checks.sh"
checks_pid=
step_done ok
log "all tests passed"
