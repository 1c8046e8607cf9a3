#!/usr/bin/env bash
# The image of the Containerfile builds and its ksieve runs, where a container engine can build it: the
# first of podman, buildah and docker that answers (docker: its daemon runs) and has the base image
# debian:12-slim or can pull it. Otherwise the test is skipped (exit 77) with the reason printed: it is
# never reported as passed without the image built and `ksieve --version` run in it.
# Usage: check_container.sh SOURCE_DIR KSIEVE_BINARY
set -euo pipefail
src=$1
version=$("$2" --version)
base=docker.io/library/debian:12-slim
skip()
{
    echo "container: SKIPPED: $1"
    exit 77
}

engine=
for e in podman buildah docker; do
    command -v "$e" >/dev/null || continue
    case $e in
        docker) timeout 20 docker info >/dev/null 2>&1 || { echo "container: docker found, its daemon does not answer"; continue; } ;;
        *) timeout 20 "$e" info >/dev/null 2>&1 || { echo "container: $e found, it does not run here"; continue; } ;;
    esac
    engine=$e
    break
done
[ -n "$engine" ] || skip "no container engine runs here (podman, buildah or docker)"
echo "container: engine $engine"

have_base()
{
    case $engine in
        docker) docker image inspect "$base" >/dev/null 2>&1 ;;
        *) "$engine" inspect "$base" >/dev/null 2>&1 ;;
    esac
}
if ! have_base; then
    timeout 120 "$engine" pull "$base" >/dev/null 2>&1 || skip "$engine cannot pull the base image $base (no registry reachable) and does not have it"
fi

tag=localhost/ksieve-test:$$
case $engine in
    buildah) build=(buildah bud) ;;
    *) build=("$engine" build) ;;
esac
"${build[@]}" -f "$src/Containerfile" -t "$tag" "$src"
case $engine in
    buildah) got=$(buildah run "$(buildah from "$tag")" ksieve --version) ;;
    *) got=$("$engine" run --rm "$tag" ksieve --version) ;;
esac
user=$(case $engine in buildah) buildah inspect --format '{{.OCIv1.Config.User}}' "$tag" ;; *) "$engine" image inspect --format '{{.Config.User}}' "$tag" ;; esac)
"$engine" rmi "$tag" >/dev/null 2>&1 || true
if [ "$got" != "$version" ]; then
    echo "container: ksieve --version in the image says '$got', the build's '$version'" >&2
    exit 1
fi
if [ "$user" != ksieve ]; then
    echo "container: the image runs as '$user', not the user ksieve" >&2
    exit 1
fi
echo "container: the image of Containerfile built with $engine; its '$got' runs as the user ksieve"
