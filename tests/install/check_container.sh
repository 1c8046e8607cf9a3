#!/usr/bin/env bash
# The image of the Containerfile builds and its ksieve runs, where a container engine can build it: the
# first of podman, buildah and docker that answers (docker: its daemon runs), has the base image
# debian:12-slim or can pull it, and can run a command in a container (podman and buildah without an OCI
# runtime that works here: in a chroot, --isolation chroot). Otherwise the test is skipped (exit 77) with
# the reason printed: it is never reported as passed without the image built and `ksieve --version` run in
# it as the user the image runs as.
# Usage: check_container.sh SOURCE_DIR KSIEVE_BINARY
set -euo pipefail
src=$1
version=$("$2" --version)
base=docker.io/library/debian:12-slim
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
skip()
{
    echo "container: SKIPPED: $1"
    exit 77
}

engine=
for e in podman buildah docker; do
    command -v "$e" >/dev/null || continue
    if timeout 20 "$e" info >/dev/null 2>&1; then
        engine=$e
        break
    fi
    echo "container: $e found, it does not answer here ($e info fails)"
done
[ -n "$engine" ] || skip "no container engine runs here (podman, buildah or docker)"
echo "container: engine $engine"

case $engine in
    docker) have_base() { docker image inspect "$base" >/dev/null 2>&1; } ;;
    *) have_base() { "$engine" inspect "$base" >/dev/null 2>&1; } ;;
esac
if ! have_base; then
    timeout 120 "$engine" pull "$base" >/dev/null 2>&1 ||
        skip "$engine cannot pull the base image $base (no registry reachable) and does not have it"
fi

# build: the command that builds a Containerfile ($1) in a context ($2) into a tag ($3), where RUN works
build=()
printf 'FROM %s\nRUN echo ksieve-probe\n' "$base" > "$work/Probe"
for b in "$engine build" "$engine build --isolation chroot"; do
    [ "$engine" = buildah ] && b=${b/buildah build/buildah bud}
    [ "$engine" = docker ] && [[ $b == *chroot* ]] && continue
    if timeout 300 $b -f "$work/Probe" -t localhost/ksieve-probe:$$ "$work" > "$work/probe.log" 2>&1; then
        read -r -a build <<< "$b"
        break
    fi
done
"$engine" rmi localhost/ksieve-probe:$$ >/dev/null 2>&1 || true
[ ${#build[@]} -gt 0 ] || skip "$engine cannot run a command in a container here: $(grep -m 1 -i error "$work/probe.log" || tail -n 1 "$work/probe.log")"
echo "container: ${build[*]}"

tag=localhost/ksieve-test:$$
"${build[@]}" -f "$src/Containerfile" -t "$tag" "$src"
# ksieve --version in the image, as its user: a container run where one works, else a build step on it
if got=$("$engine" run --rm "$tag" ksieve --version 2>/dev/null); then
    :
else
    printf 'FROM %s\nRUN echo "version: $(ksieve --version) user: $(id -un)"\n' "$tag" > "$work/Run"
    out=$("${build[@]}" --no-cache -f "$work/Run" -t "$tag-run" "$work" 2>&1 || true)
    got=$(sed -n 's/^version: \(.*\) user: .*/\1/p' <<< "$out")
    user=$(sed -n 's/^version: .* user: \(.*\)/\1/p' <<< "$out")
    "$engine" rmi "$tag-run" >/dev/null 2>&1 || true
fi
user=${user:-$("$engine" image inspect --format '{{.Config.User}}' "$tag" 2>/dev/null ||
               buildah inspect --format '{{.OCIv1.Config.User}}' "$tag")}
"$engine" rmi "$tag" >/dev/null 2>&1 || true
if [ "$got" != "$version" ]; then
    echo "container: ksieve --version in the image says '$got', the build's '$version'" >&2
    exit 1
fi
if [ "$user" != ksieve ]; then
    echo "container: the image runs as '$user', not the user ksieve" >&2
    exit 1
fi
echo "container: the image of Containerfile built with ${build[*]}; its '$got' runs as the user ksieve"
