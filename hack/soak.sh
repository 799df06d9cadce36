#!/usr/bin/env bash
# The "nothing is lost" soak (issue 9): the randomized lag property test (tests/e2e/
# lag_property_test.cc) with many sequences, half with the shard guard and half with the fallback,
# outside the test command. Builds only what it needs, runs niced (the machine is shared), prints one
# line per sequence and the counts at the end; exits non-zero when any sequence broke an invariant
# (its report names the seed, the mode, the lag and the offending events).
#
# usage: hack/soak.sh [SEQUENCES]           (default 200; about 25 s each on 2 cores)
#        hack/soak.sh --drain [SEQUENCES]   the drain soak (tests/e2e/drain_test.cc, DrainSoak):
#                                           real Prometheus shards remote-writing to a receiver,
#                                           random scales, receiver outages and kill -9, judged
#                                           from the receiver (default 5; about 2 min each)
# Env:   SHARDSCALER_LAG_SEED   first seed (default: random, printed); SHARDSCALER_LAG_STEPS
#        steps per sequence (default 8); SHARDSCALER_SOAK_LOG where the output is kept
#        (default build/soak-<date>.log)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$SHARDSCALER_ROOT"

drain=false
if [[ ${1:-} == --drain ]]; then
  drain=true
  shift
fi
sequences=${1:-$($drain && echo 5 || echo 200)}
[[ $sequences =~ ^[1-9][0-9]*$ ]] || die "SEQUENCES must be a positive number, not '$sequences'"

log "packages and control-plane binaries"
ensure_packages "${SHARDSCALER_PACKAGES[@]}"
ensure_kubectl
SHARDSCALER_KUBE_BIN_DIR=$(tests/control-plane/build.sh)
export SHARDSCALER_KUBE_BIN_DIR
tests/control-plane/sweep.sh

log "build (the test binary, shardscaler and the operator emulator only)"
configure_main_build
cmake --build build -j"$(nproc)" --target e2e_lag_property_test e2e_drain_test shardscaler \
  operator-emulator

out=${SHARDSCALER_SOAK_LOG:-build/soak-$(date -u +%Y%m%dT%H%M%SZ).log}
log "soak: $sequences sequences on $(nproc) cores, nice 10; output in $out"
started=$(date +%s)
status=0
if $drain; then
  # One namespace per sequence of ten random steps; each runs in its own test process.
  for ((i = 0; i < sequences; i++)); do
    SHARDSCALER_DRAIN_SEQUENCES=1 nice -n 10 build/bin/e2e_drain_test \
      --gtest_filter='DrainSoak.*' --gtest_color=no 2>&1 | tee -a "$out" || status=$?
  done
else
  SHARDSCALER_SOAK_SEQUENCES=$sequences nice -n 10 build/bin/e2e_lag_property_test \
    --gtest_filter='LagPropertyTest.With*' --gtest_color=no 2>&1 | tee "$out" || status=$?
fi
log "soak finished in $(( $(date +%s) - started ))s with status $status"
exit "$status"
