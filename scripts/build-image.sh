#!/usr/bin/env bash
# Builds the server's image with podman (deploy/Containerfile): a base made from Debian's packages
# (debootstrap, then `podman import`; kept and reused once made), the wheels built outside the image (the
# server's and every one requirements.lock names, hashes checked), then the image.
#   scripts/build-image.sh [TAG]          TAG: localhost/discours-core:<version> by default
# PODMAN_RUNTIME (runc by default: the default crun fails on some kernels' setrlimit and hybrid cgroups),
# DEBIAN_MIRROR and SUITE choose the rest.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNTIME=${PODMAN_RUNTIME:-runc}
SUITE=${SUITE:-bookworm}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
BASE=localhost/discours-base:$SUITE
VERSION=$(python3 -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')
TAG=${1:-localhost/discours-core:$VERSION}
PYTHON=${PYTHON:-.venv/bin/python}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! podman image exists "$BASE"; then
  echo "making the base image $BASE from Debian's packages" >&2
  debootstrap --variant=minbase --include=python3,python3-venv "$SUITE" "$work/rootfs" "$MIRROR" >/dev/null
  rm -rf "$work"/rootfs/var/cache/apt/archives/*.deb "$work"/rootfs/var/lib/apt/lists/*
  tar -C "$work/rootfs" -c . | podman import --change 'CMD ["/bin/bash"]' - "$BASE" >/dev/null
  rm -rf "$work/rootfs"
fi

# The wheels the image's Python needs (its version may differ from this one's: markers are evaluated for it).
# (explicit limits: podman's defaults may exceed what the kernel lets its runtime set)
image_python=$(podman run --rm --runtime "$RUNTIME" --network none --ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" \
  --ulimit nproc=16384:16384 "$BASE" python3 -c 'import platform; print(platform.python_version())')
mkdir -p "$work/context/wheels"
"$PYTHON" scripts/lock_for.py requirements.lock "$image_python" > "$work/wheels.txt"
"$PYTHON" -m pip wheel -q --require-hashes --no-deps -r "$work/wheels.txt" -w "$work/context/wheels"
"$PYTHON" -m pip wheel -q --no-deps -w "$work/context/wheels" .
rm -rf build
cp requirements.lock deploy/Containerfile "$work/context/"
podman build --format docker --runtime "$RUNTIME" --network none --build-arg "BASE=$BASE" -t "$TAG" -f "$work/context/Containerfile" \
  "$work/context" >&2
podman image prune -f --filter label=discours.stage=build >/dev/null  # the build stage, left untagged
echo "$TAG"
