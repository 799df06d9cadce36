#!/usr/bin/env bash
# Builds the image with hack/image.sh into a private image store (removed at exit) and checks it
# with buildah: a non-root numeric user, the entrypoint, a size bound. Then runs `shardscaler
# version` in it with podman as 65532 on a read-only root filesystem. When podman cannot run any
# container here, it says why in one line and exits 77 (ctest's SKIP_RETURN_CODE), after the
# build and config checks.
# Usage: image_test.sh <shardscaler binary>
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
binary=$(realpath "$1")
# Measured: 30 MB (the stripped binary 6 MB, its 33 shared libraries 23 MB); the Debian 12 minbase
# root filesystem they come from is 150 MB. The bound leaves 2x headroom and fails a full one.
max_bytes=$((60 * 1000 * 1000))
uid=65532

fail() { echo "FAIL: $*" >&2; exit 1; }
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: building the image needs root (debootstrap, chroot)"
  exit 77
fi

store=$(mktemp -d "${TMPDIR:-/tmp}/shardscaler-image-test.XXXXXX")
cleanup() {
  timeout 60 podman rm -af -t 0 >/dev/null 2>&1 || true
  timeout 60 buildah rm -a >/dev/null 2>&1 || true
  awk -v d="$store/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r |
    while read -r m; do umount -l "$m" || true; done
  rm -rf --one-file-system "$store"
}
trap cleanup EXIT
printf '[storage]\ndriver = "vfs"\nrunroot = "%s/run"\ngraphroot = "%s/graph"\n' "$store" "$store" \
  >"$store/storage.conf"
export CONTAINERS_STORAGE_CONF=$store/storage.conf
tag=localhost/shardscaler:image-test

# The cold build runs debootstrap (minutes); warm, it unpacks the cached root filesystem.
timeout 900 "$root/hack/image.sh" --binary "$binary" --tag "$tag" || fail "hack/image.sh failed"

# The config, and the layers' sizes as stored (uncompressed) from the manifest buildah keeps.
user=$(buildah inspect --type image --format '{{.OCIv1.Config.User}}' "$tag")
entrypoint=$(buildah inspect --type image \
  --format '{{range .OCIv1.Config.Entrypoint}}{{.}} {{end}}' "$tag")
entrypoint=${entrypoint% }
sizes=$(buildah inspect --type image --format '{{.Manifest}}' "$tag" | sed 's/.*"layers"://' |
  grep -o '"size":[0-9]*' | cut -d: -f2 | paste -sd+)
bytes=$((${sizes:-0}))
[ "$bytes" -gt 0 ] || fail "no layer sizes in the image's manifest"
[ "$user" = "$uid:$uid" ] || fail "image user is '$user', want $uid:$uid (numeric, non-root)"
[ "$entrypoint" = /usr/local/bin/shardscaler ] || fail "image entrypoint is $entrypoint"
echo "image $tag: user $user, entrypoint $entrypoint, $bytes bytes"
[ "$bytes" -le "$max_bytes" ] || fail "image is $bytes bytes, over the bound of $max_bytes"

# podman's defaults (file and process limits above what this process may set, crun's refusal of
# a cgroup v1+v2 hybrid) fail in some sandboxes: ask for limits at most this process's, and runc.
run_flags=(--rm --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
if command -v runc >/dev/null; then run_flags+=(--runtime runc); fi

# Can podman run anything here? A root filesystem of this machine's `true` and its libraries.
probe=$store/probe
mkdir -p "$probe"
for f in /usr/bin/true $(ldd /usr/bin/true | grep -o '/[^ ]*'); do
  install -D "$(readlink -f "$f")" "$probe$f"
done
if ! why=$(timeout 120 podman run "${run_flags[@]}" --rootfs "$probe" /usr/bin/true 2>&1); then
  echo "SKIP: podman cannot run containers here ($(tail -1 <<<"$why")); build and config checked"
  exit 77
fi

want=$("$binary" version)
got=$(timeout 120 podman run "${run_flags[@]}" --read-only --user "$uid" "$tag" version 2>&1) ||
  fail "podman run $tag version: $got"
[ "$got" = "$want" ] || fail "the image says '$got', the binary '$want'"
echo "PASS: $got (in the image, as $uid, read-only root filesystem)"
