#!/usr/bin/env bash
# The CPU-bound checks that need no server: clang-tidy over the main build, the unit tests under
# ASan+UBSan and the concurrent parts (k8s-client) under TSan, then each fuzz target for a bounded
# time. The unit tests and the fuzz targets come from one clang build (configure_checks_build in
# hack/lib.sh), built once, before the first of them runs. hack/test.sh runs this at the lowest
# CPU priority while the server tests, which mostly wait, run in the foreground; it runs alone just
# as well.
# Usage: hack/checks.sh [main build dir, default build]
# Env:   SHARDSCALER_FUZZ_SECONDS how long each fuzz target runs (default 15)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$SHARDSCALER_ROOT"

build=${1:-build}
jobs=$(nproc)
started=$(date +%s)
step() { log "$* (checks at $(( $(date +%s) - started ))s)"; }

# Every check runs, also after one failed, so that one run reports them all. (set -e does not act
# inside a command whose status is tested, so each step below chains its commands with &&.)
checks_build() {
  local targets
  mapfile -t targets < <(fuzz_targets)
  configure_checks_build &&
    cmake --build "$SHARDSCALER_CHECKS_BUILD" -j"$jobs" --target unit_tests "${targets[@]}"
}
asan_unit_tests() {
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$SHARDSCALER_CHECKS_BUILD" -L '^unit$' -j"$jobs" --output-on-failure \
    --no-tests=error
}
tsan_k8s_client() {
  configure build-tsan -DCMAKE_BUILD_TYPE=Debug -DSHARDSCALER_TSAN=ON \
    -DSHARDSCALER_BUILD_BENCH=OFF "${SHARDSCALER_UNITY_ARGS[@]}" &&
    cmake --build build-tsan -j"$jobs" --target k8s_client_unit_tests &&
    TSAN_OPTIONS=halt_on_error=1 build-tsan/bin/k8s_client_unit_tests
}
failed=()
check() {
  local name=$1
  shift
  step "$name"
  timed "  $name" "$@" || failed+=("$name")
}
# The sanitizer build first: clang-tidy reads which headers each unit test includes from its record.
check "build: unit tests and fuzz targets, clang ASan+UBSan" checks_build
check "unit tests under ASan+UBSan" asan_unit_tests
check "clang-tidy" hack/tidy.sh "$build"
check "concurrent parts (k8s-client) under TSan" tsan_k8s_client
check "fuzz targets, ${SHARDSCALER_FUZZ_SECONDS:-15}s each" hack/fuzz.sh "${SHARDSCALER_FUZZ_SECONDS:-15}"

[ ${#failed[@]} -eq 0 ] || die "checks failed: ${failed[*]} (their output is above)"
step "checks passed"
