#!/usr/bin/env bash
# The libFuzzer targets (tests/fuzz) for the decoders that read outside input: builds them in the
# checks' clang build with ASan and UBSan (build-checks, configure_checks_build in hack/lib.sh),
# then runs each for a bounded time from its seed corpus (tests/fuzz/corpus/<target>, read only;
# new inputs go to a temporary directory). Any crash, sanitizer report, leak or timeout fails the
# run and leaves the input in build-checks/crashes.
# usage: hack/fuzz.sh [SECONDS per target, default 20] [TARGET...] (hack/test.sh gives 15)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$SHARDSCALER_ROOT"

seconds=${1:-20}
[[ $seconds =~ ^[1-9][0-9]*$ ]] || die "SECONDS must be a positive number, not '$seconds'"
shift || true
mapfile -t targets < <(fuzz_targets "$@")

configure_checks_build
build=$SHARDSCALER_CHECKS_BUILD
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"

crashes=$build/crashes
mkdir -p "$crashes"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# fuzz_one <target>: runs it from its seeds; its output in $scratch/<name>.log, its exit status
# in $scratch/<name>.status.
fuzz_one() {
  local t=${1#fuzz_} status=0
  mkdir -p "$scratch/$t"
  # libFuzzer stops by itself after max_total_time; timeout(1) is the bound if it hangs anyway.
  timeout --kill-after=10 $((seconds + 60)) "$build/bin/$1" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$crashes/$t-" "$scratch/$t" "tests/fuzz/corpus/$t" \
    >"$scratch/$t.log" 2>&1 || status=$?
  echo "$status" >"$scratch/$t.status"
}
for target in "${targets[@]}"; do
  [ -d "tests/fuzz/corpus/${target#fuzz_}" ] ||
    die "no seed corpus for ${target#fuzz_} (want tests/fuzz/corpus/${target#fuzz_})"
done
# One target per core at a time: each runs on one core for its time.
for target in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
  log "fuzz ${target#fuzz_}: ${seconds}s from" \
    "$(find "tests/fuzz/corpus/${target#fuzz_}" -type f | wc -l) seed(s)"
  fuzz_one "$target" &
done
wait
failed=()
total_runs=0
for target in "${targets[@]}"; do
  t=${target#fuzz_}
  if [ "$(cat "$scratch/$t.status")" != 0 ]; then
    log "fuzz $t failed:"
    tail -n 60 "$scratch/$t.log" >&2
    failed+=("$t")
    continue
  fi
  grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$scratch/$t.log" |
    tr '\n' ' ' | sed "s/^/    $t: /;s/\$/\n/"
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$scratch/$t.log")
  total_runs=$((total_runs + ${runs:-0}))
done
[ ${#failed[@]} -eq 0 ] || die "fuzz target(s) failed: ${failed[*]} (inputs in $crashes)"
log "fuzz: ${#targets[@]} target(s) ran ${seconds}s each, $total_runs inputs, without a failure"
