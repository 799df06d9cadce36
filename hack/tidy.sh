#!/usr/bin/env bash
# clang-tidy-16 over every project source the build compiles, with the repo's .clang-tidy. Two
# records spare a run what is known clean:
# - hack/tidy-baseline names a commit whose full check was clean and the clang-tidy that ran it.
#   A file is checked when it differs from that commit, or a project header it includes does, or
#   a CMakeLists.txt of its folder or a folder above it; every file is when .clang-tidy, cmake/,
#   the top CMakeLists.txt or the clang-tidy version differ, or when the clone does not have the
#   commit.
# - A file that passed is stamped in the cache dir, keyed by its content, the project headers it
#   includes and the config, so a warm run re-checks only what changed since.
# Which headers a file includes is the builds' own record (ninja -t deps of the given build and of
# the other build dirs beside it); a file no build compiled yet counts every project header. A
# unity build's record names the sources each of its files includes: each gets all its headers.
#
# Usage: hack/tidy.sh [--all] [--record-baseline] <build dir> [file...]
#   --all              check every file (or every file given), whatever the baseline and stamps say
#   --record-baseline  on a work tree without changes: check every file the stamps do not know
#                      clean, whatever the baseline says, and once all are clean write HEAD and the
#                      clang-tidy version into hack/tidy-baseline (then commit that file)
#   file...            check only these sources (paths from the repository's root)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$SHARDSCALER_ROOT"

all=0
record=0
while [ $# -gt 0 ]; do
  case $1 in
    --all) all=1 ;;
    --record-baseline) record=1 ;;
    -*) die "unknown option $1 (usage: hack/tidy.sh [--all] [--record-baseline] <build dir> [file...])" ;;
    *) break ;;
  esac
  shift
done
build=${1:-build}
shift || true
[ -f "$build/compile_commands.json" ] || die "$build/compile_commands.json missing: configure first"
if [ "$record" -eq 1 ]; then
  [ $# -eq 0 ] || die "--record-baseline checks every file, not some"
  [ -z "$(git status --porcelain --untracked-files=no)" ] ||
    die "--record-baseline needs a work tree without changes: the baseline names a commit"
fi

tidy_version=$(clang-tidy-16 --version | sed -n 's/.*LLVM version \([^ ]*\).*/\1/p')
stamp_dir="$SHARDSCALER_CACHE_DIR/tidy"
mkdir -p "$stamp_dir"

# The project headers each source includes, from every build dir's dependency record.
declare -A header_deps=() deps_read=()
for dir in "$build" build build-*; do
  [ -f "$dir/build.ninja" ] && [ -z "${deps_read[$dir]:-}" ] || continue
  deps_read[$dir]=1
  while read -r source headers; do
    header_deps[$source]="${header_deps[$source]:-} $headers"
  done < <(ninja -C "$dir" -t deps 2>/dev/null | awk -v root="$SHARDSCALER_ROOT" '
    function project(path) {
      if (substr(path, 1, 3) == "../") path = substr(path, 4)
      else if (substr(path, 1, length(root) + 1) == root "/") path = substr(path, length(root) + 2)
      else return ""
      return path
    }
    function flush(  n, i, s) { n = split(sources, s, " "); for (i = 1; i <= n; i++) print s[i], headers }
    /^[^ ].*: #deps/ { flush(); sources = ""; headers = ""; first = 1; next }
    /^    / { path = project($1); if (path == "") next
              if (first) { sources = path; first = 0 }
              else if (path ~ /\.cc$/) sources = sources " " path
              else if (path ~ /\.h$/) headers = headers " " path }
    END { flush() }')
done
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
if [ $# -gt 0 ]; then
  mapfile -t sources < <(printf '%s\n' "$@" | sort -u | comm -12 - <(printf '%s\n' "$compiled"))
  [ ${#sources[@]} -eq $# ] || die "not compiled by $build (or not a source): $(printf '%s\n' "$@" |
    sort -u | comm -23 - <(printf '%s\n' "$compiled") | tr '\n' ' ')"
else
  mapfile -t sources < <(git ls-files '*.cc' | sort | comm -12 - <(printf '%s\n' "$compiled"))
fi

# What differs from the baseline: "all", or the changed paths, one a line.
baseline_commit=$(sed -n 's/^commit //p' hack/tidy-baseline 2>/dev/null || true)
baseline_version=$(sed -n 's/^clang-tidy //p' hack/tidy-baseline 2>/dev/null || true)
changed_since_baseline() {
  if [ -z "$baseline_commit" ] || ! git cat-file -e "$baseline_commit^{commit}" 2>/dev/null ||
    [ "$baseline_version" != "$tidy_version" ]; then
    echo all
    return
  fi
  local paths
  paths=$({ git diff --name-only "$baseline_commit" --; git ls-files --others --exclude-standard; } |
    sort -u)
  if grep -qxE '\.clang-tidy|CMakeLists\.txt|cmake/.*' <<<"$paths"; then
    echo all
    return
  fi
  printf '%s\n' "$paths"
}
declare -A changed=()
changed_all=1
if [ "$all" -eq 0 ] && [ "$record" -eq 0 ]; then
  since=$(changed_since_baseline)
  if [ "$since" != all ]; then
    changed_all=0
    while read -r p; do [ -n "$p" ] && changed[$p]=1; done <<<"$since"
  fi
fi
any_header_changed=0
for p in "${!changed[@]}"; do [[ $p == *.h ]] && any_header_changed=1; done
# affected <source>: it, a header it includes or a CMakeLists.txt above it differs from the baseline.
affected() {
  local f=$1 h dir
  [ -n "${changed[$f]:-}" ] && return 0
  if [ -z "${header_deps[$f]+set}" ]; then
    [ "$any_header_changed" -eq 1 ] && return 0
  else
    for h in ${header_deps[$f]}; do [ -n "${changed[$h]:-}" ] && return 0; done
  fi
  dir=$(dirname "$f")
  while [ "$dir" != . ]; do
    [ -n "${changed[$dir/CMakeLists.txt]:-}" ] && return 0
    dir=$(dirname "$dir")
  done
  return 1
}

todo=()
spared=0
for f in "${sources[@]}"; do
  if [ "$all" -eq 1 ]; then
    todo+=("$f")
  elif [ "$changed_all" -eq 0 ] && ! affected "$f"; then
    spared=$((spared + 1))
  elif [ ! -f "$(stamp "$f")" ]; then
    todo+=("$f")
  fi
done
if [ "$changed_all" -eq 0 ]; then
  log "clang-tidy: ${#todo[@]} of ${#sources[@]} file(s) to check ($spared unchanged since the" \
    "clean baseline ${baseline_commit:0:12}, the rest stamped clean in $stamp_dir)"
else
  log "clang-tidy: ${#todo[@]} of ${#sources[@]} file(s) to check (the rest stamped clean)"
fi

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
if [ ${#todo[@]} -gt 0 ]; then
  for f in "${todo[@]}"; do printf '%s\0%s\0' "$f" "$(stamp "$f")"; done |
    xargs -0 -n2 -P "$(nproc)" bash -c 'check "$0" "$1"' ||
    die "clang-tidy found problems (above)"
fi
if [ "$record" -eq 1 ]; then
  printf 'commit %s\nclang-tidy %s\n' "$(git rev-parse HEAD)" "$tidy_version" >hack/tidy-baseline
  log "clang-tidy: every file clean; hack/tidy-baseline now names $(git rev-parse --short HEAD): commit it"
fi
