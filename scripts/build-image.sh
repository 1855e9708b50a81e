#!/usr/bin/env bash
# make image: builds the kraftd image (Containerfile, FROM scratch) for the
# host's architecture from dist/ (make dist) with podman, buildah or docker
# (CONTAINER_BUILDER overrides, flags included). The context is assembled in a temp dir:
# the binaries, the CA bundle of Debian's ca-certificates package, the
# passwd/group of the runtime user, and the empty data and tmp dirs.
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE=${IMAGE:-localhost/kraftd:dev}
VERSION=${VERSION:-dev}
CA_BUNDLE=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
ARCH=${ARCH:-$(go env GOARCH)}
UID_GID=65532

builder() {
	if [ -n "${CONTAINER_BUILDER:-}" ]; then echo "$CONTAINER_BUILDER"; return; fi
	for b in podman buildah docker; do
		command -v "$b" >/dev/null 2>&1 && { echo "$b"; return; }
	done
	return 1
}

b=$(builder) || { echo "make image: no podman, buildah or docker to build with" >&2; exit 1; }
read -ra b <<<"$b" # the builder may carry global flags ("podman --runtime runc")
[ -f "dist/controller-linux-$ARCH" ] || { echo "make image: no dist/controller-linux-$ARCH (run make dist)" >&2; exit 1; }
[ -f "$CA_BUNDLE" ] || { echo "make image: no CA bundle at $CA_BUNDLE (apt-get install ca-certificates)" >&2; exit 1; }
ca_version=$(dpkg-query -W -f '${Version}' ca-certificates 2>/dev/null || echo unknown)

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
mkdir -p "$ctx/rootfs/etc/ssl/certs" "$ctx/rootfs/var/lib/kraftd" "$ctx/rootfs/tmp"
chmod 1777 "$ctx/rootfs/tmp"
cp "$CA_BUNDLE" "$ctx/rootfs/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/root:/sbin/nologin\nkraftd:x:%d:%d:kraftd:/var/lib/kraftd:/sbin/nologin\n' $UID_GID $UID_GID >"$ctx/rootfs/etc/passwd"
printf 'root:x:0:\nkraftd:x:%d:\n' $UID_GID >"$ctx/rootfs/etc/group"
cp dist/controller-linux-* "$ctx/"
cp Containerfile "$ctx/"

args=(-f "$ctx/Containerfile" -t "$IMAGE" --platform "linux/$ARCH" --build-arg "TARGETARCH=$ARCH" --build-arg "VERSION=$VERSION"
	--build-arg "CA_CERTIFICATES_VERSION=$ca_version")
case "${b[0]}" in
buildah) "${b[@]}" bud "${args[@]}" "$ctx" ;;
*) "${b[@]}" build "${args[@]}" "$ctx" ;;
esac
echo "built $IMAGE with ${b[0]} ($ARCH, ca-certificates $ca_version)"
