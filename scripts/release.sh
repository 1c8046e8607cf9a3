#!/usr/bin/env bash
# Make the release files of ksieve VERSION: the source tarball and, beside it, the conda recipe as it is
# submitted to bioconda-recipes (recipes/ksieve is its template: a tarball cannot hold its own checksum).
#
#   OUTDIR/ksieve-VERSION.tar.gz   git archive of the tag vVERSION (or of HEAD where there is no such tag),
#                                  under the folder ksieve-VERSION/; reproducible: tar's entries in git's
#                                  sorted order with the commit's time as their mtime, gzip without a
#                                  name or time stamp (the same bytes on every run)
#   OUTDIR/recipe/meta.yaml        the template with the version and the tarball's sha256 filled in
#   OUTDIR/recipe/build.sh         the recipe's build script
#
# The tarball is to be uploaded as the release asset that the recipe's url names
# (https://github.com/ksieve/ksieve/releases/download/vVERSION/ksieve-VERSION.tar.gz).
# Usage: scripts/release.sh VERSION [OUTDIR]   (OUTDIR default: dist/ of the repository)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -lt 1 ] || ! [[ $1 =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    echo "usage: scripts/release.sh VERSION [OUTDIR]   (VERSION: X.Y.Z)" >&2
    exit 2
fi
version=$1
outdir=${2:-$root/dist}

cd "$root"
ref=HEAD
if git rev-parse -q --verify "refs/tags/v$version" >/dev/null; then
    ref="v$version"
fi
# the version that the archived tree builds (project(ksieve VERSION ...), the one place it is set)
built=$(git show "$ref:CMakeLists.txt" | sed -n 's/^project(ksieve VERSION \([0-9.]*\).*/\1/p')
if [ "$built" != "$version" ]; then
    echo "release: $ref builds ksieve $built, not $version (set project(ksieve VERSION $version) and commit)" >&2
    exit 1
fi
if [ "$ref" = HEAD ] && [ -n "$(git status --porcelain --untracked-files=no)" ]; then
    echo "release: note: uncommitted changes are not in the tarball (it is the commit $(git rev-parse --short HEAD))" >&2
fi

mkdir -p "$outdir/recipe"
tarball="$outdir/ksieve-$version.tar.gz"
git -c tar.umask=0022 archive --format=tar --prefix="ksieve-$version/" "$ref" | gzip -n -9 > "$tarball.tmp"
mv "$tarball.tmp" "$tarball"
sha256=$(sha256sum "$tarball" | cut -d ' ' -f 1)

template="$root/recipes/ksieve/meta.yaml"
if ! grep -q '^{% set version = "'"$version"'" %}$' "$template"; then
    echo "release: $template does not set version $version" >&2
    exit 1
fi
# the template's opening comment gives way to one line on where the recipe comes from
{
    echo "# ksieve $version: made by scripts/release.sh of the ksieve repository from its recipes/ksieve/meta.yaml"
    sed -e '1,/^{% set name/{/^#/d}' -e 's/^{% set sha256 = "[0-9a-f]*" %}$/{% set sha256 = "'"$sha256"'" %}/' \
        "$template"
} > "$outdir/recipe/meta.yaml"
if ! grep -q "$sha256" "$outdir/recipe/meta.yaml"; then
    echo "release: the template has no line {% set sha256 = \"...\" %} to fill in" >&2
    exit 1
fi
cp "$root/recipes/ksieve/build.sh" "$outdir/recipe/build.sh"
echo "release: $tarball (sha256 $sha256, from $ref)"
echo "release: $outdir/recipe/meta.yaml and build.sh, for bioconda-recipes/recipes/ksieve/"
