#!/usr/bin/env bash
# Installs a build tree into a temporary prefix and checks what users get: the executable, the man page, bash
# completion, and the CMake package (a program built against it with find_package(ksieve CONFIG) runs); then
# checks that ksieve added to a parent project with add_subdirectory keeps to itself.
# Usage: check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check_install: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
p=$tmp/prefix
[ -x "$p/bin/ksieve" ] || fail "bin/ksieve not installed"
"$p/bin/ksieve" --version | grep -q '^ksieve ' || fail "installed ksieve does not run"
[ -f "$p/include/ksieve/filters/common/sharded_filter.hpp" ] || fail "headers not installed"
ls "$p"/lib*/libksieve_filters.a >/dev/null 2>&1 || fail "filter library not installed"
ls "$p"/lib*/cmake/ksieve/ksieveConfig.cmake >/dev/null 2>&1 || fail "CMake package not installed"
man=$p/share/man/man1/ksieve.1
[ -f "$man" ] || fail "man page not installed"
for section in NAME SYNOPSIS BUILD CLASSIFY DEDUP MERGE INFO; do
    grep -q "^\.SH $section" "$man" || fail "man page lacks section $section"
done
grep -q -- '--min-hit-fraction' "$man" || fail "man page lacks the classify options"
if command -v man >/dev/null; then
    MANWIDTH=100 man -l "$man" 2>/dev/null | grep -q 'classify' || fail "man cannot render the page"
fi
comp=$p/share/bash-completion/completions/ksieve
[ -f "$comp" ] || fail "bash completion not installed"
got=$(bash -c "source '$comp'; COMP_WORDS=(ksieve clas); COMP_CWORD=1; _ksieve; echo \${COMPREPLY[*]}")
[ "$got" = classify ] || fail "completion of 'clas' gave '$got'"
got=$(bash -c "source '$comp'; COMP_WORDS=('$p/bin/ksieve' classify --nov); COMP_CWORD=2; _ksieve; echo \${COMPREPLY[*]}")
[ "$got" = "--novel --novel2" ] || fail "completion of 'classify --nov' gave '$got'"

cmake -S "$src/tests/install/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$p" -DCMAKE_BUILD_TYPE=Release \
    >/dev/null || fail "find_package(ksieve CONFIG) failed"
cmake --build "$tmp/consumer" >/dev/null || fail "the consumer does not build against the package"
out=$("$tmp/consumer/consumer" "$tmp/x.ksf")
echo "$out" | grep -q 'known' || fail "the consumer printed '$out'"

cmake -S "$src/tests/install/parent" -B "$tmp/parent" -DKSIEVE_SOURCE_DIR="$src" -DKSIEVE_BUILD_PIPELINE=OFF \
    >/dev/null || fail "add_subdirectory checks failed"
echo "check_install: all checks passed"
