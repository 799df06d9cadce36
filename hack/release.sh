#!/usr/bin/env bash
# Renders the release manifests: one file per install flavour, deploy/release/<flavour>.yaml,
# from the kustomize sources under deploy/, with the image REGISTRY/shardscaler:VERSION (VERSION
# from the file of that name). The committed files name the registry "REGISTRY"; --registry
# renders one flavour for your registry instead, on stdout.
# Usage: hack/release.sh                          rewrites every deploy/release/<flavour>.yaml
#        hack/release.sh --check                  fails when a committed file differs from a
#                                                 fresh render (the test command runs this)
#        hack/release.sh --registry R FLAVOUR     prints FLAVOUR with the image R/shardscaler:VERSION
#        hack/release.sh --list                   prints the flavours and their sources
set -euo pipefail
source "$(dirname "$0")/lib.sh"

# flavour -> the kustomization under deploy/ it is rendered from.
declare -A sources=(
  [standalone]=base
  [standalone-external-metrics]=overlays/external-metrics
  [namespaced]=overlays/namespaced
  [cert-manager]=overlays/cert-manager
  [prometheus-operator-sidecar]=overlays/prometheus-operator-sidecar
)
placeholder=REGISTRY
release_dir=$SHARDSCALER_ROOT/deploy/release

mode=write
registry=$placeholder
flavours=()
while [ $# -gt 0 ]; do
  case $1 in
    --check) mode=check; shift ;;
    --list) mode=list; shift ;;
    --registry)
      [ $# -ge 2 ] || die "--registry needs a value (a registry host with an optional path)"
      registry=${2%/}; mode=print; shift 2 ;;
    --registry=*) registry=${1#--registry=}; registry=${registry%/}; mode=print; shift ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown flag '$1' (see hack/release.sh --help)" ;;
    *) flavours+=("$1"); shift ;;
  esac
done
mapfile -t all < <(printf '%s\n' "${!sources[@]}" | LC_ALL=C sort)
if [ "$mode" = list ]; then
  for f in "${all[@]}"; do printf '%-30s deploy/%s\n' "$f" "${sources[$f]}"; done
  exit 0
fi
if [ "$mode" = print ]; then
  [ ${#flavours[@]} -eq 1 ] || die "--registry renders one flavour: name it (${all[*]})"
  [[ $registry =~ ^[a-z0-9]([a-z0-9.:_-]*[a-z0-9])?(/[a-z0-9._-]+)*$ ]] ||
    die "--registry '$registry' is not a registry host with an optional path (host[:port][/path])"
elif [ ${#flavours[@]} -gt 0 ]; then
  die "name a flavour only with --registry"
else
  flavours=("${all[@]}")
fi
for f in "${flavours[@]}"; do
  [ -n "${sources[$f]:-}" ] || die "unknown flavour '$f' (${all[*]})"
done
version=$(head -1 "$SHARDSCALER_ROOT/VERSION")
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
  die "VERSION holds '$version', not a semantic version"
command -v kubectl >/dev/null || die "kubectl is needed (its kustomize renders the manifests)"

work=$(mktemp -d "${TMPDIR:-/tmp}/shardscaler-release.XXXXXX")
trap 'rm -rf "$work"' EXIT

# render <flavour> <registry>: the manifest on stdout. A kustomization outside the tree names the
# flavour's folder by a relative path (kustomize refuses absolute ones) and sets the image.
render() {
  local flavour=$1 reg=$2 dir
  dir=$work/$flavour
  mkdir -p "$dir"
  cat >"$dir/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- $(realpath --relative-to="$dir" "$SHARDSCALER_ROOT/deploy/${sources[$flavour]}")
images:
- name: shardscaler
  newName: $reg/shardscaler
  newTag: "$version"
EOF
  local out
  out=$(kubectl kustomize "$dir" 2>"$dir/stderr") ||
    { cat "$dir/stderr" >&2; die "kubectl kustomize deploy/${sources[$flavour]} failed"; }
  printf '# shardscaler %s, flavour %s, image %s/shardscaler:%s: rendered by hack/release.sh\n' \
    "$version" "$flavour" "$reg" "$version"
  printf '# from deploy/%s. Do not edit: change deploy/ and run hack/release.sh.\n' "${sources[$flavour]}"
  if [ "$reg" = "$placeholder" ]; then
    printf '# Install it with your registry (README.md, "Install on a cluster"):\n'
    printf '#   hack/release.sh --registry <your registry> %s | kubectl apply -f -\n' "$flavour"
  fi
  printf '%s\n' "$out"
}

case $mode in
  print)
    render "${flavours[0]}" "$registry"
    ;;
  write)
    mkdir -p "$release_dir"
    for f in "${flavours[@]}"; do render "$f" "$placeholder" >"$release_dir/$f.yaml"; done
    # A flavour that was dropped leaves no file behind.
    for existing in "$release_dir"/*.yaml; do
      [ -e "$existing" ] || continue
      name=$(basename "$existing" .yaml)
      [ -n "${sources[$name]:-}" ] || rm -f "$existing"
    done
    log "rendered ${#flavours[@]} flavours into deploy/release (version $version)"
    ;;
  check)
    stale=()
    for f in "${flavours[@]}"; do
      render "$f" "$placeholder" >"$work/$f.yaml"
      if ! cmp -s "$work/$f.yaml" "$release_dir/$f.yaml"; then
        stale+=("$f")
        diff -u "$release_dir/$f.yaml" "$work/$f.yaml" | head -40 >&2 || true
      fi
    done
    for existing in "$release_dir"/*.yaml; do
      [ -e "$existing" ] || continue
      name=$(basename "$existing" .yaml)
      [ -n "${sources[$name]:-}" ] || stale+=("$name (no such flavour)")
    done
    [ ${#stale[@]} -eq 0 ] ||
      die "deploy/release is not current for: ${stale[*]}; run hack/release.sh and commit the result"
    echo "deploy/release: ${#flavours[@]} flavours current (version $version)"
    ;;
esac
