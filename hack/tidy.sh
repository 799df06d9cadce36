#!/usr/bin/env bash
# clang-tidy-16 over every project source, with the repo's .clang-tidy. A file that passed is
# remembered (keyed by its content, every project header and the config) in the cache dir, so a
# warm run only re-checks what changed. Usage: hack/tidy.sh <build dir with compile_commands.json>
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$SHARDSCALER_ROOT"
build=${1:-build}
[ -f "$build/compile_commands.json" ] || die "$build/compile_commands.json missing: configure first"

stamp_dir="$SHARDSCALER_CACHE_DIR/tidy"
mkdir -p "$stamp_dir"
context=$(git ls-files '*.h' | xargs cat .clang-tidy | sha256sum | cut -c1-16)
stamp() { echo "$stamp_dir/$(sha256sum <"$1" | cut -c1-16)-$context"; }

todo=()
for f in $(git ls-files '*.cc'); do
  [ -f "$(stamp "$f")" ] || todo+=("$f")
done
log "clang-tidy: ${#todo[@]} file(s) to check"
[ ${#todo[@]} -eq 0 ] && exit 0

# One clang-tidy per file, two at a time; a file's stamp is written only when it is clean.
check() {
  local out
  if out=$(clang-tidy-16 -p "$build" --quiet "$1" 2>&1); then
    touch "$2"
  else
    printf '%s\n' "$out"
    return 1
  fi
}
export -f check
export build
for f in "${todo[@]}"; do printf '%s\0%s\0' "$f" "$(stamp "$f")"; done |
  xargs -0 -n2 -P "$(nproc)" bash -c 'check "$0" "$1"' ||
  die "clang-tidy found problems (above)"
