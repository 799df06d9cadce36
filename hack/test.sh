#!/usr/bin/env bash
# Runs every test: installs what is missing, builds, checks formatting and lint, runs the unit,
# integration and end-to-end tests, builds and runs the image (hack/image.sh), then the unit tests
# again under ASan+UBSan and TSan, then each fuzz target for a bounded time.
# Usage: hack/test.sh            (CI runs exactly this through .ci/run)
# Env:   SHARDSCALER_CACHE_DIR   cache outside the clone (default ~/.cache/shardscaler)
#        SHARDSCALER_TEST_LABELS ctest label regex to run (default: all)
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

cleanup() { tests/control-plane/sweep.sh || true; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step "format check"
mapfile -t cxx_files < <(git ls-files '*.cc' '*.h')
if ! clang-format --dry-run --Werror "${cxx_files[@]}"; then
  die "clang-format would change the files above: run clang-format -i on them"
fi

step "build (RelWithDebInfo)"
configure build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$jobs"

step "clang-tidy"
hack/tidy.sh build

labels=${SHARDSCALER_TEST_LABELS:-unit|tools|integration|e2e|image}
for label in unit tools; do
  [[ $label =~ ^($labels)$ ]] || continue
  step "ctest: $label"
  ctest --test-dir build -L "^$label\$" -j"$jobs" --output-on-failure --no-tests=error
done
for label in integration e2e; do
  [[ $label =~ ^($labels)$ ]] || continue
  step "ctest: $label"
  ctest --test-dir build -L "^$label\$" --output-on-failure --no-tests=error
done

if [[ image =~ ^($labels)$ ]]; then
  # The cold run debootstraps the image's root filesystem into the cache (5 to 7 minutes);
  # a warm run assembles the image from it in seconds.
  step "image: hack/image.sh's image, run with podman"
  ctest --test-dir build -L '^image$' --output-on-failure --no-tests=error
fi

step "unit tests under ASan+UBSan"
configure build-asan -DCMAKE_BUILD_TYPE=Debug -DSHARDSCALER_SANITIZE=ON -DSHARDSCALER_BUILD_BENCH=OFF
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan -L '^unit$' -j"$jobs" --output-on-failure --no-tests=error

step "concurrent parts (k8s-client) under TSan"
configure build-tsan -DCMAKE_BUILD_TYPE=Debug -DSHARDSCALER_TSAN=ON -DSHARDSCALER_BUILD_BENCH=OFF
cmake --build build-tsan -j"$jobs" --target k8s_client_unit_tests
TSAN_OPTIONS=halt_on_error=1 build-tsan/bin/k8s_client_unit_tests

step "fuzz targets, ${SHARDSCALER_FUZZ_SECONDS:-15}s each"
hack/fuzz.sh "${SHARDSCALER_FUZZ_SECONDS:-15}"

step "all tests passed"
