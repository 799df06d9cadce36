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

# A file's stamp covers its text, the config and the project headers it includes: the build's own
# dependency record (ninja -t deps) names them. A file the build has no record of (not built yet)
# counts every project header instead.
declare -A header_deps=()
while read -r source headers; do
  header_deps[$source]="${header_deps[$source]:-} $headers"
done < <(ninja -C "$build" -t deps 2>/dev/null | awk -v root="$SHARDSCALER_ROOT" '
  function project(path) {
    if (substr(path, 1, 3) == "../") path = substr(path, 4)
    else if (substr(path, 1, length(root) + 1) == root "/") path = substr(path, length(root) + 2)
    else return ""
    return path
  }
  /^[^ ].*: #deps/ { if (source != "") print source, headers; source = ""; headers = ""; first = 1; next }
  /^    / { path = project($1); if (path == "") next
            if (first) { source = path; first = 0 } else if (path ~ /\.h$/) headers = headers " " path }
  END { if (source != "") print source, headers }')
all_headers=$(git ls-files '*.h' | tr '\n' ' ')
config=$(sha256sum <.clang-tidy | cut -c1-16)
stamp() {
  local headers=${header_deps[$1]:-$all_headers}
  # shellcheck disable=SC2086 # one word per header path
  local key=$({ cat "$1"; printf '%s\n' $headers | sort -u | xargs -r cat 2>/dev/null; } | sha256sum | cut -c1-16)
  echo "$stamp_dir/$key-$config"
}

# Only what this build compiles has its flags in compile_commands.json (tests/fuzz builds in its
# own clang build, hack/fuzz.sh); anything else would be checked with guessed flags.
compiled=$(sed -n 's|^ *"file": *"'"$SHARDSCALER_ROOT"'/\(.*\)",*$|\1|p' "$build/compile_commands.json" |
  sort -u)
todo=()
for f in $(git ls-files '*.cc' | sort | comm -12 - <(printf '%s\n' "$compiled")); do
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
