#!/usr/bin/env bash
# Builds the shardscaler image with buildah and no registry: deploy/Dockerfile's runtime stage
# (its Debian 12 packages, user 65532, the entrypoint) from a debootstrap root filesystem made from
# this machine's apt sources, around a binary this clone already built (nothing is compiled here).
# The image holds only what the binary loads (its shared libraries, found with ldd in that root
# filesystem), the CA bundle, /etc/passwd and the dpkg records and copyright files of the packages
# those come from: about a tenth of a Debian root filesystem, and no shell or package manager.
# The root filesystem (upgraded from the -updates and -security suites) is cached as a tarball in
# $SHARDSCALER_CACHE_DIR/image, keyed by the package list: a warm run only assembles the image.
# With --push REGISTRY it then pushes the image to REGISTRY/shardscaler:VERSION, the name the
# release manifests use (hack/release.sh --registry REGISTRY renders them for it).
# Usage: hack/image.sh [--binary PATH] [--tag NAME] [--push REGISTRY [--tls-verify=false]]
#        hack/image.sh --rootfs-only
#        (as root)
#   --rootfs-only        only make sure the cached root filesystem exists, and stop: no binary is
#                        needed, so hack/test.sh runs it beside its build
#   --push REGISTRY      host[:port][/path] to push to; the tag becomes REGISTRY/shardscaler:VERSION
#   --tls-verify=false   push over plain HTTP or without verifying the registry's certificate (a
#                        registry of your own on loopback)
#   buildah's credentials apply: `buildah login REGISTRY` first where the registry wants them.
# Env:   SHARDSCALER_CACHE_DIR, and buildah's own (CONTAINERS_STORAGE_CONF picks the image store)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

binary=$SHARDSCALER_ROOT/build/bin/shardscaler
tag=""
push=""
tls_verify=true
rootfs_only=""
usage="usage: hack/image.sh [--binary PATH] [--tag NAME] [--push REGISTRY [--tls-verify=false]]"
usage+=" | hack/image.sh --rootfs-only"
while [ $# -gt 0 ]; do
  case $1 in
    --binary) [ $# -ge 2 ] || die "$usage"; binary=$2; shift 2 ;;
    --tag) [ $# -ge 2 ] || die "$usage"; tag=$2; shift 2 ;;
    --push) [ $# -ge 2 ] || die "$usage"; push=${2%/}; shift 2 ;;
    --push=*) push=${1#--push=}; push=${push%/}; shift ;;
    --tls-verify=true) tls_verify=true; shift ;;
    --tls-verify=false) tls_verify=false; shift ;;
    --rootfs-only) rootfs_only=1; shift ;;
    *) die "unknown argument '$1' ($usage)" ;;
  esac
done
if [ -n "$push" ]; then
  [[ $push =~ ^[a-z0-9]([a-z0-9.:_-]*[a-z0-9])?(/[a-z0-9._-]+)*$ ]] ||
    die "--push '$push' is not a registry host with an optional path (host[:port][/path])"
  [ -z "$tag" ] || die "--push names the image REGISTRY/shardscaler:VERSION; leave out --tag"
fi
[ -z "$rootfs_only" ] || [ -z "$push$tag" ] ||
  die "--rootfs-only builds no image: leave out --push and --tag"
[ "$(id -u)" -eq 0 ] || die "hack/image.sh runs debootstrap and chroot: run it as root"
[ -n "$rootfs_only" ] || [ -x "$binary" ] ||
  die "no shardscaler binary at $binary: build it first (see hack/test.sh)"
ensure_packages "${SHARDSCALER_IMAGE_PACKAGES[@]}"

suite=bookworm  # Debian 12, as deploy/Dockerfile's FROM lines
uid=65532       # deploy/Dockerfile's USER, and the Deployment's runAsUser
if [ -z "$rootfs_only" ]; then
  # "shardscaler 0.1.0 (commit e6cdfebb498c)"
  version=$("$binary" version | awk '{ print $2 }') || die "$binary version failed"
  [ -n "$version" ] || die "$binary version printed no version"
  # The tag is what the release manifests (hack/release.sh) name: VERSION's.
  want=$(head -1 "$SHARDSCALER_ROOT/VERSION")
  [ "$version" = "$want" ] ||
    die "$binary is version $version, VERSION says $want: build it from this tree first"
  if [ -n "$push" ]; then
    tag=$push/shardscaler:$version
  elif [ -z "$tag" ]; then
    tag=localhost/shardscaler:$version
  fi
fi

# The runtime stage's packages: the last `apt-get install` of deploy/Dockerfile (tests/unit/deploy
# checks that list against the binary's libraries), so both ways of building install the same.
mapfile -t packages < <(
  sed -e ':a' -e '/\\$/{N;s/\\\n//;ba' -e '}' "$SHARDSCALER_ROOT/deploy/Dockerfile" |
    grep -v '^#' | grep 'apt-get install' | tail -1 |
    sed -e 's/.*apt-get install//' -e 's/&&.*//' | tr -s ' \t' '\n' | grep -v -e '^-' -e '^$' |
    LC_ALL=C sort)
[ ${#packages[@]} -gt 0 ] || die "deploy/Dockerfile has no runtime 'apt-get install' line"

# "URI suite components" of every enabled deb source of this machine for $suite and $suite-*,
# from one-line .list files and deb822 .sources files alike.
apt_sources() {
  {
    local f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
      if [ -e "$f" ]; then cat "$f"; fi
    done | awk '$1 == "deb" { i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                         c = ""; for (j = i + 2; j <= NF; j++) c = c " " $j
                         print $i, $(i + 1), c }'
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -e "$f" ] || continue
      awk 'BEGIN { RS = ""; FS = "\n" }
           { t = u = s = c = ""; e = "yes"
             for (i = 1; i <= NF; i++) {
               if ($i ~ /^#/ || !match($i, /^[A-Za-z-]+:/)) continue
               k = tolower(substr($i, 1, RLENGTH - 1)); v = substr($i, RLENGTH + 1)
               sub(/^[ \t]+/, "", v)
               if (k == "types") t = v; else if (k == "uris") u = v
               else if (k == "suites") s = v; else if (k == "components") c = v
               else if (k == "enabled") e = tolower(v) }
             if (e == "no" || (" " t " ") !~ / deb /) next
             nu = split(u, us, " "); ns = split(s, ss, " ")
             for (a = 1; a <= nu; a++) for (b = 1; b <= ns; b++) print us[a], ss[b], c }' "$f"
    done
  } | awk -v s="$suite" '$2 == s || index($2, s "-") == 1 { $1 = $1; print }'
}

cache=$SHARDSCALER_CACHE_DIR/image
key=$(printf '%s\n' "$suite" "$(dpkg --print-architecture)" minbase "${packages[@]}" |
  sha256sum | cut -c1-16)
rootfs_tar=$cache/rootfs-$suite-$key.tar
work=$(mktemp -d "${TMPDIR:-/tmp}/shardscaler-image.XXXXXX")
ctr=""
# unmount_under dir: debootstrap may leave /proc mounted in the root filesystem; nothing under it
# is removed or archived while it is.
unmount_under() {
  awk -v d="$1/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r |
    while read -r m; do umount -l "$m"; done
}
cleanup() {
  unmount_under "$work" || true
  rm -rf --one-file-system "$work"
  rm -f "$rootfs_tar.$$.part"
  [ -z "$ctr" ] || buildah rm "$ctr" >/dev/null 2>&1 || true
}
trap cleanup EXIT

rootfs=$work/rootfs
# One run at a time makes a given root filesystem: a second (the image test, while the test command
# still makes it beside the build) waits for the first's tarball instead of making its own.
mkdir -p "$cache"
exec {rootfs_lock}>"$rootfs_tar.lock"
flock -w 1800 "$rootfs_lock" ||
  die "another hack/image.sh has been making $rootfs_tar for 30 minutes (it holds" \
    "$rootfs_tar.lock): let it finish or stop it, and run again"
if [ ! -f "$rootfs_tar" ]; then
  mapfile -t sources < <(apt_sources)
  mirror=$(printf '%s\n' "${sources[@]}" | awk -v s="$suite" '$2 == s { print $1; exit }')
  [ -n "$mirror" ] || die "no deb source for '$suite' in this machine's apt sources (/etc/apt)"
  log "debootstrap $suite (minbase + ${packages[*]}) into the cache, once per package list"
  debootstrap --variant=minbase --include="$(IFS=,; echo "${packages[*]}")" \
    "$suite" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log" >&2; die "debootstrap failed (log above)"; }
  log "upgrading it from ${suite}-updates and ${suite}-security"
  # Only the newer suites: the main suite's index is what debootstrap just installed from.
  printf '%s\n' "${sources[@]}" | awk -v s="$suite" '$2 != s { print "deb", $0 }' \
    >"$rootfs/etc/apt/sources.list"
  cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
  if ! { chroot "$rootfs" apt-get update -q &&
    chroot "$rootfs" env DEBIAN_FRONTEND=noninteractive apt-get -y -q upgrade; } \
    >"$work/upgrade.log" 2>&1; then
    tail -20 "$work/upgrade.log" >&2
    die "upgrading the root filesystem failed (log above)"
  fi
  chroot "$rootfs" apt-get clean
  unmount_under "$rootfs"
  tar -C "$rootfs" --one-file-system -cf "$rootfs_tar.$$.part" .
  mv "$rootfs_tar.$$.part" "$rootfs_tar"
elif [ -z "$rootfs_only" ]; then
  log "root filesystem from the cache: $rootfs_tar"
  mkdir -p "$rootfs"
  tar -C "$rootfs" -xf "$rootfs_tar"
fi
flock -u "$rootfs_lock"
if [ -n "$rootfs_only" ]; then
  log "root filesystem cached: $rootfs_tar"
  exit 0
fi

# The binary without its debug sections, as the Dockerfile installs it.
install -D -m 0755 "$binary" "$rootfs/usr/local/bin/shardscaler"
strip --strip-debug "$rootfs/usr/local/bin/shardscaler"
# Inside the root filesystem: every file the image keeps and every symlink that leads to one
# (usr-merge's /lib and /lib64, the libraries' sonames), and the packages they come from.
chroot "$rootfs" /bin/bash -euo pipefail -s >"$work/keep" <<'EOF'
files=(/usr/local/bin/shardscaler /etc/nsswitch.conf /etc/ssl/certs/ca-certificates.crt)
ldd=$(ldd /usr/local/bin/shardscaler)
if grep -q 'not found' <<<"$ldd"; then echo "$ldd" >&2; exit 1; fi
mapfile -t -O ${#files[@]} files <<<"$(grep -o '/[^ ]*' <<<"$ldd" | sort -u)"
declare -A keep dirs
for f in "${files[@]}"; do
  real=$(readlink -f "$f")
  keep[$real]=1
  d=${real%/*}; while [ -n "$d" ]; do dirs[$d]=1; d=${d%/*}; done
  # A symlink on the way to it (/lib64 of the loader's path) is kept below as a directory's.
  d=${f%/*}; while [ -n "$d" ]; do dirs[$(readlink -f "$d")]=1; d=${d%/*}; done
done
# dpkg records the libraries under /lib, where usr-merge's symlinks make them /usr/lib; the CA
# bundle is made by ca-certificates' script, so no package lists it.
mapfile -t paths <<<"$(printf '%s\n' "${!keep[@]}" | sed -e p -e 's|^/usr/|/|')"
packages=$({ dpkg -S "${paths[@]}" 2>/dev/null || true; } | cut -d: -f1 | tr ', ' '\n\n' |
  grep -v '^$' | LC_ALL=C sort -u)
packages=$(printf '%s\n' $packages ca-certificates | LC_ALL=C sort -u)
for p in $packages; do
  if [ -f "/usr/share/doc/$p/copyright" ]; then keep[/usr/share/doc/$p/copyright]=1; fi
done
printf '%s\n' "${!keep[@]}"
# The symlinks in those directories (and /) that lead to a kept file or directory.
mapfile -t links <<<"$(find / "${!dirs[@]}" -maxdepth 1 -type l | LC_ALL=C sort -u)"
mapfile -t targets <<<"$(realpath -m -- "${links[@]}")"
for i in "${!links[@]}"; do
  t=${targets[$i]}
  if [ -n "${keep[$t]:-}" ] || [ -n "${dirs[$t]:-}" ]; then echo "${links[$i]}"; fi
done
dpkg-query -s $packages >/tmp/image-dpkg-status
echo $packages >/tmp/image-packages
EOF
image=$work/image
mkdir -p "$image/var/lib/dpkg" "$image/etc" "$image/tmp"
sed 's|^/||' "$work/keep" | tar -C "$rootfs" --no-recursion -cf - -T - | tar -C "$image" -xf -
cp "$rootfs/tmp/image-dpkg-status" "$image/var/lib/dpkg/status"
cp "$rootfs/etc/os-release" "$image/etc/os-release" 2>/dev/null ||
  cp "$rootfs/usr/lib/os-release" "$image/etc/os-release"
printf '%s\n' root:x:0:0:root:/root:/sbin/nologin \
  "nonroot:x:$uid:$uid:nonroot:/home/nonroot:/sbin/nologin" >"$image/etc/passwd"
printf 'root:x:0:\nnonroot:x:%s:\n' "$uid" >"$image/etc/group"
chmod 1777 "$image/tmp"

log "assembling $tag ($(du -sh "$image" | cut -f1)) from $(cat "$rootfs/tmp/image-packages")"
ctr=$(buildah from scratch)
buildah add --quiet "$ctr" "$image" / >/dev/null
# What deploy/Dockerfile's runtime stage sets: numeric user (runAsNonRoot can check it), the
# ports of /metrics and /healthz,/readyz, the entrypoint and the default command.
buildah config --user "$uid:$uid" --port 8080 --port 8081 \
  --entrypoint '["/usr/local/bin/shardscaler"]' --cmd run \
  --label org.opencontainers.image.title=shardscaler \
  --label "org.opencontainers.image.version=$version" "$ctr"
buildah commit --quiet --rm "$ctr" "$tag"
ctr=""

if [ -n "$push" ]; then
  log "pushing $tag"
  buildah push --quiet --tls-verify="$tls_verify" "$tag" "docker://$tag" >/dev/null ||
    die "buildah push $tag failed (credentials: buildah login ${push%%/*})"
  echo "pushed $tag"
fi
