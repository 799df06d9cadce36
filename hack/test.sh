#!/usr/bin/env bash
# Runs every test: installs what is missing, builds, checks formatting, runs the tools,
# integration and end-to-end tests and builds and runs the image (hack/image.sh), while
# hack/checks.sh runs clang-tidy, the unit tests under ASan+UBSan, the concurrent parts under TSan
# and each fuzz target for a bounded time.
# Usage: hack/test.sh            (CI runs exactly this through .ci/run)
# Env:   SHARDSCALER_CACHE_DIR   cache outside the clone (default ~/.cache/shardscaler)
#        SHARDSCALER_TEST_LABELS ctest labels to run beside the checks (default:
#                                tools|integration|e2e|image)
#        SHARDSCALER_FUZZ_SECONDS how long each fuzz target runs (default 15)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$SHARDSCALER_ROOT"

jobs=$(nproc)
started=$(date +%s)
step() { log "$* (at $(( $(date +%s) - started ))s)"; }

step "packages"
ensure_packages "${SHARDSCALER_PACKAGES[@]}"
ensure_kubectl

step "control-plane binaries (cached in $SHARDSCALER_CACHE_DIR)"
tests/control-plane/build.sh
tests/control-plane/sweep.sh

checks_pid=
image_pid=
cleanup() {
  local pid
  for pid in $checks_pid $image_pid; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  tests/control-plane/sweep.sh || true
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step "format check"
mapfile -t cxx_files < <(git ls-files '*.cc' '*.h')
if ! clang-format --dry-run --Werror "${cxx_files[@]}"; then
  die "clang-format would change the files above: run clang-format -i on them"
fi

step "build (RelWithDebInfo)"
# The unit tests are built and run once, under ASan+UBSan, by hack/checks.sh.
configure build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHARDSCALER_UNIT_TESTS_IN_ALL=OFF
cmake --build build -j"$jobs"

# The checks that only compute (clang-tidy, the sanitizer builds and runs, fuzzing) run at the
# lowest CPU priority beside the tests below, which spend most of their time waiting on servers.
step "checks (hack/checks.sh) start beside the tests; log: build/checks.log"
setsid -w nice -n 19 hack/checks.sh build >build/checks.log 2>&1 &
checks_pid=$!

labels=${SHARDSCALER_TEST_LABELS:-tools|integration|e2e|image}
if [[ image =~ ^($labels)$ ]]; then
  # The cold run debootstraps the image's root filesystem into the cache (5 to 7 minutes, mostly
  # downloading and unpacking); a warm run assembles the image from it in seconds.
  step "image: hack/image.sh's image, run with podman, starts beside the tests; log: build/image.log"
  setsid -w nice -n 10 ctest --test-dir build -L '^image$' --output-on-failure --no-tests=error \
    >build/image.log 2>&1 &
  image_pid=$!
fi
if [[ tools =~ ^($labels)$ ]]; then
  step "ctest: tools"
  ctest --test-dir build -L '^tools$' -j"$jobs" --output-on-failure --no-tests=error
fi
for label in integration e2e; do
  [[ $label =~ ^($labels)$ ]] || continue
  step "ctest: $label"
  ctest --test-dir build -L "^$label\$" --output-on-failure --no-tests=error
done

# wait_beside <pid> <log> <what>: waits for a job started beside the tests, prints its log, and
# fails the run when it failed.
wait_beside() {
  local status=0
  wait "$1" || status=$?
  cat "$2" >&2
  [ "$status" -eq 0 ] || die "$3 failed (exit $status; its log is above)"
}
if [ -n "$image_pid" ]; then
  step "waiting for the image test"
  wait_beside "$image_pid" build/image.log "the image test"
  image_pid=
fi
step "waiting for the checks"
wait_beside "$checks_pid" build/checks.log "hack/checks.sh"
checks_pid=

step "all tests passed"
